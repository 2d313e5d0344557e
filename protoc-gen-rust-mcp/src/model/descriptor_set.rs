//! The descriptor set each package embeds for the runtime: which files it needs (reachable
//! types, the options the runtime reads), pruned of everything else, ordered and re-encoded as
//! the request had them.

use std::collections::{BTreeMap, BTreeSet};

use prost::Message as _;
use prost_reflect::{DescriptorPool, FileDescriptor};
use prost_types::FileDescriptorProto;
use tonic_mcp_schema::tools;

use super::Inputs;

/// The descriptors the runtime needs for this package, as an encoded `FileDescriptorSet`.
///
/// That is the package's files, every file defining a type they reach through fields or
/// methods or that `extra_types` (the types long-running operations hold) reach, and the files
/// defining the custom options the runtime reads again
/// ([`RUNTIME_OPTIONS`]: `google.api.field_behavior`, `buf.validate`, `rust_mcp`) when a file of
/// the set imports them. Files are written as the request had them, extension options included,
/// so that the runtime's full-schema check of a shrunk tool sees required, hidden and validated
/// fields as the plugin did. Other imports that only bring options are left out, and so are the
/// files prost-reflect always carries (the well-known types and `descriptor.proto`), which the
/// runtime decodes the set on top of. Source info is stripped. Files are ordered by name with
/// every file after its imports, so the bytes do not depend on the request's file order. When
/// the pruned set does not stand on its own (a type reached through a public import), the full
/// import closure is used instead.
pub(super) fn descriptor_set(inputs: &Inputs, files: &[String], extra_types: &[String]) -> Vec<u8> {
    let package_files: Vec<FileDescriptor> = files
        .iter()
        .filter_map(|f| inputs.pool.get_file_by_name(f))
        .collect();
    let mut needed: BTreeSet<String> = files.iter().cloned().collect();
    let mut starts: Vec<prost_reflect::MessageDescriptor> = inputs
        .pool
        .all_messages()
        .filter(|m| files.iter().any(|f| f == m.parent_file().name()))
        .collect();
    for file in &package_files {
        for method in file
            .services()
            .flat_map(|service| service.methods().collect::<Vec<_>>())
        {
            starts.push(method.input());
            starts.push(method.output());
        }
    }
    starts.extend(
        extra_types
            .iter()
            .filter_map(|name| inputs.pool.get_message_by_name(name)),
    );
    for message in tools::reachable_messages(starts, |_| true) {
        needed.insert(message.parent_file().name().to_owned());
        for field in message.fields() {
            if let prost_reflect::Kind::Enum(target) = field.kind() {
                needed.insert(target.parent_file().name().to_owned());
            }
        }
    }
    add_option_files(inputs, &mut needed);
    needed.retain(|name| !is_builtin(name));
    let pruned = ordered_files(inputs, &needed);
    // Decoding the set into a pool is the authority, and costly; most sets pass the cheaper
    // check that every type they name is defined where prost-reflect would look for it.
    let with_builtins: Vec<&FileDescriptorProto> = builtin_files().iter().chain(&pruned).collect();
    let encoded = encode_set(inputs, &pruned, &needed);
    if resolves_alone(&with_builtins)
        || DescriptorPool::global()
            .decode_file_descriptor_set(encoded.as_slice())
            .is_ok()
    {
        return encoded;
    }
    let mut closure = BTreeSet::new();
    let mut stack = package_files;
    while let Some(file) = stack.pop() {
        if closure.insert(file.name().to_owned()) {
            stack.extend(file.dependencies());
        }
    }
    closure.retain(|name| !is_builtin(name));
    encode_set(inputs, &ordered_files(inputs, &closure), &closure)
}

/// The extensions the runtime reads from descriptors (`tonic_mcp_schema::extensions`): the
/// files defining them travel with the embedded set.
const RUNTIME_OPTIONS: &[&str] = &[
    "google.api.field_behavior",
    "buf.validate.field",
    "buf.validate.oneof",
    "rust_mcp.tool",
    "rust_mcp.service",
    "rust_mcp.field",
];

/// Adds to `needed` the files defining [`RUNTIME_OPTIONS`] that a file of `needed` imports, and
/// their imports.
fn add_option_files(inputs: &Inputs, needed: &mut BTreeSet<String>) {
    let defining: BTreeSet<String> = RUNTIME_OPTIONS
        .iter()
        .filter_map(|name| inputs.pool.get_extension_by_name(name))
        .map(|extension| extension.parent_file().name().to_owned())
        .collect();
    let mut stack: Vec<FileDescriptor> = needed
        .iter()
        .filter_map(|name| inputs.pool.get_file_by_name(name))
        .flat_map(|file| file.dependencies().collect::<Vec<_>>())
        .filter(|dependency| defining.contains(dependency.name()))
        .collect();
    while let Some(file) = stack.pop() {
        if needed.insert(file.name().to_owned()) {
            stack.extend(file.dependencies());
        }
    }
}

/// The files of prost-reflect's global pool: the well-known types and `descriptor.proto`.
fn builtin_files() -> &'static [FileDescriptorProto] {
    static FILES: std::sync::OnceLock<Vec<FileDescriptorProto>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        DescriptorPool::global()
            .file_descriptor_protos()
            .cloned()
            .collect()
    })
}

/// Whether the runtime has `name` without the embedded set (see [`builtin_files`]).
fn is_builtin(name: &str) -> bool {
    builtin_files().iter().any(|file| file.name() == name)
}

/// The encoded `FileDescriptorSet` of `ordered` (from [`ordered_files`]): each file as the
/// request encoded it, options included, without source info and without imports outside
/// `kept` (and the built-in files).
fn encode_set(
    inputs: &Inputs,
    ordered: &[FileDescriptorProto],
    kept: &BTreeSet<String>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for file in ordered {
        let encoded = match inputs.pool.get_file_by_name(file.name()) {
            Some(descriptor) => rewrite_imports(&descriptor.encode_to_vec(), |name| {
                kept.contains(name) || is_builtin(name)
            }),
            None => file.encode_to_vec(),
        };
        prost::encoding::bytes::encode(1, &encoded, &mut out);
    }
    out
}

/// The files `names` for a `FileDescriptorSet`: imports outside the set dropped, source info
/// stripped, files sorted by name with each after its imports.
fn ordered_files(inputs: &Inputs, names: &BTreeSet<String>) -> Vec<FileDescriptorProto> {
    let by_name: BTreeMap<&str, &FileDescriptorProto> = inputs
        .files()
        .filter(|f| names.contains(f.name()))
        .map(|f| (f.name(), f))
        .collect();
    let mut ordered: Vec<FileDescriptorProto> = Vec::with_capacity(by_name.len());
    let mut placed = BTreeSet::new();
    // Depth-first over imports, iteratively: (file, index of the next import to visit).
    for &root in by_name.keys() {
        let mut stack = vec![(root, 0usize)];
        while let Some((name, next)) = stack.pop() {
            if placed.contains(name) {
                continue;
            }
            let Some(file) = by_name.get(name) else {
                continue;
            };
            let pending = file
                .dependency
                .iter()
                .skip(next)
                .position(|d| by_name.contains_key(d.as_str()) && !placed.contains(d.as_str()));
            match pending {
                Some(offset) => {
                    let dependency = file.dependency[next + offset].as_str();
                    stack.push((name, next + offset + 1));
                    if !stack.iter().any(|(n, _)| *n == dependency) {
                        stack.push((dependency, 0));
                    }
                }
                None => {
                    placed.insert(name);
                    ordered.push(strip(file, names));
                }
            }
        }
    }
    ordered
}

/// Whether a pool built from `files` alone certainly resolves every type they name: each
/// reference is a full name (`.pkg.Type`) defined in the referring file, one of its imports or
/// a file those import publicly (where prost-reflect 0.16 looks), and no option is left
/// uninterpreted (prost-reflect would resolve it). `false` means "not sure": the caller then
/// decodes the set into a pool. The files come from a pool that accepted them with all their
/// imports, so only references into dropped imports can fail.
fn resolves_alone(files: &[&FileDescriptorProto]) -> bool {
    use prost_types::DescriptorProto;

    fn define(
        defined: &mut BTreeMap<String, usize>,
        file: usize,
        scope: &str,
        message: &DescriptorProto,
    ) {
        let name = format!("{scope}.{}", message.name());
        for nested in &message.nested_type {
            define(defined, file, &name, nested);
        }
        for e in &message.enum_type {
            defined.insert(format!("{name}.{}", e.name()), file);
        }
        defined.insert(name, file);
    }
    fn references<'a>(message: &'a DescriptorProto, out: &mut Vec<&'a str>) -> bool {
        let uninterpreted = message
            .options
            .as_ref()
            .is_some_and(|o| !o.uninterpreted_option.is_empty())
            || message.field.iter().chain(&message.extension).any(|f| {
                f.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
            || message.oneof_decl.iter().any(|o| {
                o.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
            || message.enum_type.iter().any(enum_uninterpreted);
        if uninterpreted {
            return false;
        }
        for field in message.field.iter().chain(&message.extension) {
            out.extend(field.type_name.as_deref().filter(|n| !n.is_empty()));
            out.extend(field.extendee.as_deref().filter(|n| !n.is_empty()));
        }
        message
            .nested_type
            .iter()
            .all(|nested| references(nested, out))
    }
    fn enum_uninterpreted(e: &prost_types::EnumDescriptorProto) -> bool {
        e.options
            .as_ref()
            .is_some_and(|o| !o.uninterpreted_option.is_empty())
            || e.value.iter().any(|v| {
                v.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
    }

    let index: BTreeMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name(), i))
        .collect();
    let mut defined = BTreeMap::new();
    for (i, file) in files.iter().enumerate() {
        let scope = if file.package().is_empty() {
            String::new()
        } else {
            format!(".{}", file.package())
        };
        for message in &file.message_type {
            define(&mut defined, i, &scope, message);
        }
        for e in &file.enum_type {
            defined.insert(format!("{scope}.{}", e.name()), i);
        }
    }
    // A file and the files it imports publicly, transitively.
    let public = |start: usize| {
        let mut seen = BTreeSet::from([start]);
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            let file = &files[i];
            for &p in &file.public_dependency {
                let dep = usize::try_from(p)
                    .ok()
                    .and_then(|p| file.dependency.get(p))
                    .and_then(|d| index.get(d.as_str()))?;
                if seen.insert(*dep) {
                    stack.push(*dep);
                }
            }
        }
        Some(seen)
    };
    for (i, file) in files.iter().enumerate() {
        let mut visible = BTreeSet::from([i]);
        for dependency in &file.dependency {
            let Some(dep) = index.get(dependency.as_str()).and_then(|&d| public(d)) else {
                return false;
            };
            visible.extend(dep);
        }
        let uninterpreted = file
            .options
            .as_ref()
            .is_some_and(|o| !o.uninterpreted_option.is_empty())
            || file.enum_type.iter().any(enum_uninterpreted)
            || file.extension.iter().any(|f| {
                f.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
            || file.service.iter().any(|service| {
                service
                    .options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
                    || service.method.iter().any(|m| {
                        m.options
                            .as_ref()
                            .is_some_and(|o| !o.uninterpreted_option.is_empty())
                    })
            });
        if uninterpreted {
            return false;
        }
        let mut names = Vec::new();
        for message in &file.message_type {
            if !references(message, &mut names) {
                return false;
            }
        }
        for field in &file.extension {
            names.extend(field.type_name.as_deref().filter(|n| !n.is_empty()));
            names.extend(field.extendee.as_deref().filter(|n| !n.is_empty()));
        }
        for method in file.service.iter().flat_map(|s| &s.method) {
            names.extend(method.input_type.as_deref());
            names.extend(method.output_type.as_deref());
        }
        let resolves = |name: &str| {
            name.starts_with('.')
                && defined
                    .get(name)
                    .is_some_and(|defining| visible.contains(defining))
        };
        if !names.into_iter().all(resolves) {
            return false;
        }
    }
    true
}

/// A file without source info and without imports outside `kept`.
fn strip(file: &FileDescriptorProto, kept: &BTreeSet<String>) -> FileDescriptorProto {
    let mut out = file.clone();
    out.source_code_info = None;
    let old: Vec<String> = std::mem::take(&mut out.dependency);
    let index_of = |i: i32| usize::try_from(i).ok().and_then(|i| old.get(i));
    out.dependency = old
        .iter()
        .filter(|d| kept.contains(d.as_str()) || is_builtin(d))
        .cloned()
        .collect();
    let new_index = |name: &String| out.dependency.iter().position(|d| d == name);
    out.public_dependency = file
        .public_dependency
        .iter()
        .filter_map(|&i| index_of(i).and_then(new_index))
        .filter_map(|i| i32::try_from(i).ok())
        .collect();
    out.weak_dependency = file
        .weak_dependency
        .iter()
        .filter_map(|&i| index_of(i).and_then(new_index))
        .filter_map(|i| i32::try_from(i).ok())
        .collect();
    out
}

/// An encoded `FileDescriptorProto` without its `source_code_info` and without the imports
/// (`dependency`, field 3) that `keep` refuses; `public_dependency` (10) and `weak_dependency`
/// (11), indexes into the imports, are renumbered. Every other field stays byte for byte,
/// extension options included. Bytes that do not scan as protobuf are returned whole, for the
/// pool to report.
fn rewrite_imports(bytes: &[u8], keep: impl Fn(&str) -> bool) -> Vec<u8> {
    use prost::encoding::{DecodeContext, decode_key, int32, skip_field, string};
    let scan = || -> Option<Vec<u8>> {
        let mut buf = bytes;
        let mut out = Vec::with_capacity(buf.len());
        let mut imports: Vec<String> = Vec::new();
        let (mut public, mut weak): (Vec<i32>, Vec<i32>) = (Vec::new(), Vec::new());
        while !buf.is_empty() {
            let start = buf;
            let (tag, wire_type) = decode_key(&mut buf).ok()?;
            let context = DecodeContext::default();
            match tag {
                3 => string::merge_repeated(wire_type, &mut imports, &mut buf, context).ok()?,
                10 => int32::merge_repeated(wire_type, &mut public, &mut buf, context).ok()?,
                11 => int32::merge_repeated(wire_type, &mut weak, &mut buf, context).ok()?,
                // `source_code_info`: dropped.
                9 => skip_field(wire_type, tag, &mut buf, context).ok()?,
                _ => {
                    skip_field(wire_type, tag, &mut buf, context).ok()?;
                    out.extend_from_slice(&start[..start.len() - buf.len()]);
                }
            }
        }
        let kept: Vec<&String> = imports.iter().filter(|name| keep(name)).collect();
        let renumber = |indexes: &[i32]| -> Vec<i32> {
            indexes
                .iter()
                .filter_map(|&i| usize::try_from(i).ok().and_then(|i| imports.get(i)))
                .filter_map(|name| kept.iter().position(|k| *k == name))
                .filter_map(|i| i32::try_from(i).ok())
                .collect()
        };
        for name in &kept {
            string::encode(3, name, &mut out);
        }
        for index in renumber(&public) {
            int32::encode(10, &index, &mut out);
        }
        for index in renumber(&weak) {
            int32::encode(11, &index, &mut out);
        }
        Some(out)
    };
    scan().unwrap_or_else(|| bytes.to_vec())
}

#[cfg(test)]
mod tests {
    use prost_types::{
        DescriptorProto, FieldDescriptorProto, FileDescriptorSet, field_descriptor_proto::Type,
    };

    use super::*;

    fn file(name: &str, package: &str, dependency: &[&str], public: &[i32]) -> FileDescriptorProto {
        FileDescriptorProto {
            name: Some(name.to_owned()),
            package: Some(package.to_owned()),
            dependency: dependency.iter().map(|d| (*d).to_owned()).collect(),
            public_dependency: public.to_vec(),
            syntax: Some("proto3".to_owned()),
            ..FileDescriptorProto::default()
        }
    }

    fn message(name: &str, type_name: Option<&str>) -> DescriptorProto {
        DescriptorProto {
            name: Some(name.to_owned()),
            field: type_name
                .map(|t| FieldDescriptorProto {
                    name: Some("f".to_owned()),
                    number: Some(1),
                    r#type: Some(Type::Message as i32),
                    type_name: Some(t.to_owned()),
                    json_name: Some("f".to_owned()),
                    ..FieldDescriptorProto::default()
                })
                .into_iter()
                .collect(),
            ..DescriptorProto::default()
        }
    }

    /// The cheap check never says "resolves" where prost-reflect refuses the set, and says it
    /// for the ordinary shapes.
    #[test]
    fn resolves_alone_agrees_with_the_pool() {
        let mut b = file("b.proto", "b", &[], &[]);
        b.message_type.push(message("B", None));
        let mut a = file("a.proto", "a", &["b.proto"], &[]);
        a.message_type.push(message("A", Some(".b.B")));
        let mut c_public = file("c.proto", "c", &["b.proto"], &[0]);
        c_public.message_type.push(message("C", None));
        let mut c_private = c_public.clone();
        c_private.public_dependency.clear();
        let mut via_c = file("a.proto", "a", &["c.proto"], &[]);
        via_c.message_type.push(message("A", Some(".b.B")));
        let mut dangling = file("a.proto", "a", &[], &[]);
        dangling.message_type.push(message("A", Some(".b.B")));
        let mut relative = a.clone();
        relative.message_type[0].field[0].type_name = Some("b.B".to_owned());

        let cases: Vec<(Vec<FileDescriptorProto>, bool)> = vec![
            (vec![b.clone(), a.clone()], true),
            (vec![b.clone(), c_public, via_c.clone()], true),
            (vec![b.clone(), c_private, via_c], false),
            (vec![dangling], false),
            (vec![b, relative], false),
        ];
        for (files, expected) in cases {
            let decodes = DescriptorPool::decode(
                FileDescriptorSet {
                    file: files.clone(),
                }
                .encode_to_vec()
                .as_slice(),
            )
            .is_ok();
            let cheap = resolves_alone(&files.iter().collect::<Vec<_>>());
            assert_eq!(cheap, expected, "{files:?}");
            assert!(
                !cheap || decodes,
                "resolves_alone said yes, the pool says no: {files:?}"
            );
        }
    }
}
