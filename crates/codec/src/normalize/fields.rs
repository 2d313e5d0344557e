//! A message's fields: each found by proto or JSON name and normalised, and the members of
//! each real oneof gathered from every accepted form into one `{case, value}`.

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, OneofDescriptor};
use serde_json::{Map, Value};

use super::{Normalizer, describe};
use crate::descriptor::{
    field_prop, find_field, find_member, find_oneof, null_is_a_value, oneof_prop, real_oneof,
};
use crate::path::JsonPath;

/// A oneof member found in the input, already normalised.
struct Member {
    field: FieldDescriptor,
    value: Value,
    /// The member as the model named it, for error messages.
    label: String,
    /// Where the member's value was given.
    given: JsonPath,
}

impl Normalizer {
    pub(super) fn fields(
        &mut self,
        desc: &MessageDescriptor,
        object: Map<String, Value>,
        depth: usize,
    ) -> Value {
        let mut out = Map::with_capacity(object.len());
        let mut seen: Vec<(String, String)> = Vec::new();
        // Each real oneof given, with its members as given.
        let mut groups: Vec<(OneofDescriptor, Vec<Member>)> = Vec::new();

        for (key, value) in object {
            if let Some(field) = find_field(desc, &key, self.json_names) {
                let singular_value =
                    !field.is_list() && !field.is_map() && null_is_a_value(&field.kind());
                if value.is_null() && !singular_value {
                    continue;
                }
                if let Some(oneof) = real_oneof(&field) {
                    // The flat protojson form: a member set directly on the parent.
                    let member = self.member(field, &key, value, key.clone(), depth + 1);
                    push_member(&mut groups, oneof, member);
                    continue;
                }
                self.path.push_key(&key);
                let value = self.field(&field, value, depth + 1);
                self.path.pop();
                let prop = field_prop(&field, self.json_names).into_owned();
                if let Some((_, first)) = seen.iter().find(|(p, _)| *p == prop) {
                    let message =
                        format!("`{first}` and `{key}` name the same field; give it once");
                    self.problem_at(self.path.with_key(&key), message);
                    continue;
                }
                seen.push((prop.clone(), key));
                out.insert(prop, value);
            } else if let Some(oneof) = find_oneof(desc, &key) {
                if value.is_null() {
                    continue;
                }
                self.path.push_key(&key);
                let member = self.oneof_object(&oneof, value, depth + 1);
                self.path.pop();
                if let Some(member) = member {
                    push_member(&mut groups, oneof, member);
                }
            } else {
                // Unknown: kept, so the schema reports it with the allowed names.
                out.insert(key, value);
            }
        }

        for (oneof, members) in groups {
            let prop = oneof_prop(&oneof, self.json_names);
            if members.len() > 1 {
                self.many_members(&oneof, members.iter().map(|m| m.label.as_str()));
                self.suppressed
                    .extend(members.iter().map(|member| member.given.clone()));
                self.suppressed.push(self.path.with_key(&prop));
            }
            let Some(first) = members.into_iter().next() else {
                continue;
            };
            let case = field_prop(&first.field, self.json_names).into_owned();
            let mut wrapped = Map::with_capacity(2);
            wrapped.insert("case".to_owned(), Value::String(case));
            wrapped.insert("value".to_owned(), first.value);
            out.insert(prop, Value::Object(wrapped));
        }
        Value::Object(out)
    }

    /// The oneof property in any accepted form: `{case, value}`, `{"<member>": v}` or
    /// `{"which": "<member>", "<member>": v}`.
    fn oneof_object(
        &mut self,
        oneof: &OneofDescriptor,
        value: Value,
        depth: usize,
    ) -> Option<Member> {
        let cases = member_list(oneof, self.json_names);
        let Value::Object(mut object) = self.embedded(value, '{', depth) else {
            self.problem(format!(
                "expected an object {{\"case\": <member>, \"value\": <value>}} with case one of: {cases}"
            ));
            return None;
        };

        if let Some(case) = object.remove("case") {
            let Some(field) = case
                .as_str()
                .and_then(|c| find_member(oneof, c, self.json_names))
            else {
                self.problem_at(
                    self.path.with_key("case"),
                    format!(
                        "unknown member {}; expected one of: {cases}",
                        describe(&case)
                    ),
                );
                return None;
            };
            let value = object.remove("value");
            for extra in object.keys() {
                self.problem_at(
                    self.path.with_key(extra),
                    format!("unexpected property `{extra}`; a oneof takes only `case` and `value`"),
                );
            }
            let label = case.as_str().unwrap_or_default().to_owned();
            // Every member needs its value, as the listed schema says (`required: ["case",
            // "value"]`): the empty message is `{}`, not a missing value.
            let value = match value {
                Some(v) if !v.is_null() || null_is_a_value(&field.kind()) => v,
                _ if matches!(field.kind(), Kind::Message(_)) => {
                    self.problem(format!(
                        "missing `value` for member `{label}`; give `{{}}` for the empty message"
                    ));
                    return None;
                }
                _ => {
                    self.problem(format!("missing `value` for member `{label}`"));
                    return None;
                }
            };
            return Some(self.member(field, "value", value, label, depth + 1));
        }

        // redpanda's `which` names the member; the member sits under its own name.
        let which = object.remove("which");
        let mut found: Vec<(String, FieldDescriptor, Value)> = Vec::new();
        for (key, value) in object {
            match find_member(oneof, &key, self.json_names) {
                Some(field) if !value.is_null() || null_is_a_value(&field.kind()) => {
                    found.push((key, field, value));
                }
                Some(_) => {}
                None => self.problem_at(
                    self.path.with_key(&key),
                    format!(
                        "unknown member `{key}`; expected {{\"case\": <member>, \"value\": <value>}} with case one of: {cases}"
                    ),
                ),
            }
        }
        if let Some(which) = which {
            let named = which
                .as_str()
                .and_then(|w| find_member(oneof, w, self.json_names));
            match named {
                Some(named) if found.iter().any(|(_, f, _)| *f == named) => {}
                Some(named) => {
                    self.problem(format!(
                        "`which` names `{}` but no value for it was given",
                        named.name()
                    ));
                    return None;
                }
                None => {
                    self.problem_at(
                        self.path.with_key("which"),
                        format!(
                            "unknown member {}; expected one of: {cases}",
                            describe(&which)
                        ),
                    );
                    return None;
                }
            }
        }
        match found.len() {
            0 => {
                self.problem(format!(
                    "expected {{\"case\": <member>, \"value\": <value>}} with case one of: {cases}"
                ));
                None
            }
            1 => {
                let (key, field, value) = found.remove(0);
                Some(self.member(field, &key, value, key.clone(), depth + 1))
            }
            _ => {
                self.many_members(oneof, found.iter().map(|(k, _, _)| k.as_str()));
                None
            }
        }
    }

    /// The member `field` (named `label` by the model), its value given under `key`, normalised.
    fn member(
        &mut self,
        field: FieldDescriptor,
        key: &str,
        value: Value,
        label: String,
        depth: usize,
    ) -> Member {
        self.path.push_key(key);
        let value = self.field(&field, value, depth);
        let given = self.path.clone();
        self.path.pop();
        Member {
            field,
            value,
            label,
            given,
        }
    }

    /// Reports a oneof given more than one member, named by `labels`.
    fn many_members<'l>(&mut self, oneof: &OneofDescriptor, labels: impl Iterator<Item = &'l str>) {
        let labels: Vec<String> = labels.map(|label| format!("`{label}`")).collect();
        self.problem(format!(
            "oneof `{}` takes exactly one member, but got both {}",
            oneof.name(),
            labels.join(" and ")
        ));
    }
}

fn push_member(
    groups: &mut Vec<(OneofDescriptor, Vec<Member>)>,
    oneof: OneofDescriptor,
    member: Member,
) {
    match groups.iter_mut().find(|(given, _)| *given == oneof) {
        Some((_, members)) => members.push(member),
        None => groups.push((oneof, vec![member])),
    }
}

fn member_list(oneof: &OneofDescriptor, json_names: bool) -> String {
    oneof
        .fields()
        .map(|f| field_prop(&f, json_names).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}
