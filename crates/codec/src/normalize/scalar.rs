//! Scalar values and map keys: integers in range and in canonical form, floats, loose
//! base64 and enums by name or number.

use base64::{Engine as _, prelude::BASE64_STANDARD};
use prost_reflect::{EnumDescriptor, Kind};
use serde_json::Value;

use super::{Normalizer, decode_base64_loose, describe};
use crate::number::{integer, whole};

/// An integral JSON number (or numeric string) as `i128`, if it is one.
fn integral_number(number: &serde_json::Number) -> Option<i128> {
    integer(number).or_else(|| whole(number.as_f64()?))
}

fn integral_string(text: &str) -> Option<i128> {
    let text = text.trim();
    text.parse().ok().or_else(|| whole(text.parse().ok()?))
}

impl Normalizer {
    /// A map key in canonical form (`"07"` → `"7"`), or `None` after reporting a key that is
    /// not valid for the key type. JSON map keys are always strings.
    pub(super) fn map_key(&mut self, kind: &Kind, key: &str) -> Option<String> {
        let (min, max, name) = match kind {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                (i128::from(i32::MIN), i128::from(i32::MAX), "int32")
            }
            Kind::Uint32 | Kind::Fixed32 => (0, i128::from(u32::MAX), "uint32"),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                (i128::from(i64::MIN), i128::from(i64::MAX), "int64")
            }
            Kind::Uint64 | Kind::Fixed64 => (0, i128::from(u64::MAX), "uint64"),
            Kind::Bool => {
                return if key == "true" || key == "false" {
                    Some(key.to_owned())
                } else {
                    self.problem(format!(
                        "map key `{key}` is not a bool; use \"true\" or \"false\""
                    ));
                    None
                };
            }
            _ => return Some(key.to_owned()),
        };
        match key.parse::<i128>() {
            Ok(n) if (min..=max).contains(&n) => Some(n.to_string()),
            Ok(n) => {
                self.problem(format!("map key {n} is out of range for {name}"));
                None
            }
            Err(_) => {
                self.problem(format!("map key `{key}` is not an integer ({name})"));
                None
            }
        }
    }

    pub(super) fn int32(&mut self, value: Value, min: i128, max: i128, name: &str) -> Value {
        let parsed = match &value {
            Value::Number(number) => integral_number(number),
            Value::String(text) => integral_string(text),
            _ => None,
        };
        match parsed {
            Some(i) if i < min || i > max => {
                self.problem(format!("{i} is out of range for {name}"));
                value
            }
            // A whole number past 2^53 (`1e308`): JSON Schema's `integer`, far out of any
            // 32-bit range (the schema names the range by `format`, which it does not check).
            None if value
                .as_f64()
                .is_some_and(|f| f.is_finite() && f.fract() == 0.0) =>
            {
                self.problem(format!("{} is out of range for {name}", describe(&value)));
                value
            }
            Some(i) => i64::try_from(i).map_or(value, Value::from),
            None => value,
        }
    }

    pub(super) fn int64(&mut self, value: Value, min: i128, max: i128, name: &str) -> Value {
        let parsed = match &value {
            Value::Number(number) => {
                let exact = integral_number(number);
                if exact.is_none() && number.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    self.problem(format!(
                        "{number} is too large to be exact as a JSON number; pass {name} values as strings"
                    ));
                    return value;
                }
                exact
            }
            Value::String(text) => text.trim().parse::<i128>().ok().or_else(|| {
                // Digits that overflow even i128 are certainly out of range.
                let digits = text.trim().trim_start_matches('-');
                (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .then_some(i128::MAX)
            }),
            _ => None,
        };
        match parsed {
            Some(i) if i < min || i > max => {
                self.problem(format!("{} is out of range for {name}", describe(&value)));
                value
            }
            Some(i) => Value::String(i.to_string()),
            // The schema says `string` (a JSON number cannot hold every 64-bit value), but
            // integer numbers are accepted too: say both, not "expected string".
            None => {
                let example = if min < 0 { "\"-12\"" } else { "\"12\"" };
                self.problem(format!(
                    "{} is not an integer; {name} takes a decimal string such as {example} or \
                     an integer JSON number",
                    describe(&value)
                ));
                value
            }
        }
    }

    pub(super) fn float(&mut self, value: Value, single_precision: bool) -> Value {
        match &value {
            Value::Number(number) => {
                if single_precision
                    && number
                        .as_f64()
                        .is_some_and(|f| f.abs() > f64::from(f32::MAX))
                {
                    self.problem(format!("{number} is out of range for float"));
                }
                value
            }
            Value::String(text) => match text.as_str() {
                "NaN" | "Infinity" | "-Infinity" => {
                    self.suppressed.push(self.path.clone());
                    value
                }
                other => match other.trim().parse::<f64>() {
                    Ok(float) if float.is_finite() => {
                        serde_json::Number::from_f64(float).map_or(value, Value::Number)
                    }
                    _ => value,
                },
            },
            _ => value,
        }
    }

    pub(super) fn bytes(&mut self, value: Value) -> Value {
        let Value::String(text) = &value else {
            return value;
        };
        match decode_base64_loose(text) {
            Some(bytes) => Value::String(BASE64_STANDARD.encode(bytes)),
            None => {
                self.problem("expected base64 (standard or URL-safe alphabet, padding optional)");
                value
            }
        }
    }
}

pub(super) fn enum_value(desc: &EnumDescriptor, value: Value) -> Value {
    let number = match &value {
        Value::Number(number) => integral_number(number),
        Value::String(text) => {
            if desc.get_value_by_name(text).is_some() {
                return value;
            }
            // Unambiguous case-insensitive spellings are accepted too.
            let mut matches = desc
                .values()
                .filter(|v| v.name().eq_ignore_ascii_case(text.trim()));
            if let (Some(only), None) = (matches.next(), matches.next()) {
                return Value::String(only.name().to_owned());
            }
            integral_string(text)
        }
        _ => None,
    };
    number
        .and_then(|n| i32::try_from(n).ok())
        .and_then(|n| desc.get_value(n))
        .map_or(value, |v| Value::String(v.name().to_owned()))
}
