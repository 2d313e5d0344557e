//! Imports a reflection server left out.
//!
//! Some servers answer reflection with files that use types of other files without declaring
//! the import: `@grpc/reflection` (grpc-js) sends one file per package and lists no imports,
//! so a file using `google.protobuf.Struct` does not import `google/protobuf/struct.proto`
//! although the server sent that type. Such files do not link as they are. [`add_undeclared`]
//! adds each missing import, to a file the server sent (or to prost-reflect's copy of a
//! well-known type's file), so that linking succeeds when every type is really there.

use std::collections::{BTreeSet, HashMap};

use prost::Message as _;
use prost_reflect::DescriptorPool;
use prost_types::{DescriptorProto, FileDescriptorProto};

/// Adds the imports `files` (encoded `FileDescriptorProto`s) use without declaring, appending
/// prost-reflect's copy of a well-known file when no file sent defines its type. Returns
/// `file: import` for each import added, for the warning. Files that do not decode are left
/// as they are, for the linker to report.
pub(crate) fn add_undeclared(files: &mut Vec<Vec<u8>>) -> Vec<String> {
    let mut decoded: Vec<FileDescriptorProto> = files
        .iter()
        .filter_map(|bytes| FileDescriptorProto::decode(bytes.as_slice()).ok())
        .collect();
    if decoded.len() != files.len() {
        return Vec::new();
    }
    let mut defined: HashMap<String, String> = HashMap::new();
    for file in &decoded {
        defines(file, &mut defined);
    }
    let mut added = Vec::new();
    let mut index = 0;
    while index < decoded.len() {
        let file = &decoded[index];
        let mut declared: BTreeSet<&str> = file.dependency.iter().map(String::as_str).collect();
        declared.insert(file.name());
        let mut missing = BTreeSet::new();
        for reference in references(file) {
            let name = reference.trim_start_matches('.');
            let owner = defined
                .get(name)
                .cloned()
                .or_else(|| well_known_owner(name));
            if let Some(owner) = owner
                && !declared.contains(owner.as_str())
            {
                missing.insert(owner);
            }
        }
        let importer = file.name().to_owned();
        for import in missing {
            if !decoded.iter().any(|f| f.name() == import)
                && let Some(well_known) = DescriptorPool::global().get_file_by_name(&import)
            {
                let proto = well_known.file_descriptor_proto().clone();
                defines(&proto, &mut defined);
                files.push(proto.encode_to_vec());
                decoded.push(proto);
            }
            // Appended imports keep the indexes of `public_dependency` and `weak_dependency`.
            if let Some(bytes) = files.get_mut(index) {
                prost::encoding::string::encode(3, &import, bytes);
            }
            if let Some(file) = decoded.get_mut(index) {
                file.dependency.push(import.clone());
            }
            added.push(format!("{importer}: {import}"));
        }
        index += 1;
    }
    added
}

/// The file of prost-reflect's built-in pool that defines the well-known type `name`.
fn well_known_owner(name: &str) -> Option<String> {
    if !name.starts_with("google.protobuf.") {
        return None;
    }
    let pool = DescriptorPool::global();
    let file = match pool.get_message_by_name(name) {
        Some(message) => message.parent_file(),
        None => pool.get_enum_by_name(name)?.parent_file(),
    };
    Some(file.name().to_owned())
}

/// Records every message, enum and service `file` defines, by full name.
fn defines(file: &FileDescriptorProto, defined: &mut HashMap<String, String>) {
    fn walk(
        scope: &str,
        messages: &[DescriptorProto],
        file: &str,
        defined: &mut HashMap<String, String>,
    ) {
        for message in messages {
            let name = qualified(scope, message.name());
            for nested in &message.enum_type {
                defined.insert(qualified(&name, nested.name()), file.to_owned());
            }
            walk(&name, &message.nested_type, file, defined);
            defined.insert(name, file.to_owned());
        }
    }
    let package = file.package();
    walk(package, &file.message_type, file.name(), defined);
    for enumeration in &file.enum_type {
        defined.insert(
            qualified(package, enumeration.name()),
            file.name().to_owned(),
        );
    }
    for service in &file.service {
        defined.insert(qualified(package, service.name()), file.name().to_owned());
    }
}

fn qualified(scope: &str, name: &str) -> String {
    if scope.is_empty() {
        name.to_owned()
    } else {
        format!("{scope}.{name}")
    }
}

/// The type names `file` refers to: field types, extendees, method inputs and outputs.
fn references(file: &FileDescriptorProto) -> Vec<&str> {
    fn in_messages<'f>(messages: &'f [DescriptorProto], out: &mut Vec<&'f str>) {
        for message in messages {
            for field in message.field.iter().chain(&message.extension) {
                out.extend(field.type_name.as_deref());
                out.extend(field.extendee.as_deref());
            }
            in_messages(&message.nested_type, out);
        }
    }
    let mut out = Vec::new();
    in_messages(&file.message_type, &mut out);
    for field in &file.extension {
        out.extend(field.type_name.as_deref());
        out.extend(field.extendee.as_deref());
    }
    for service in &file.service {
        for method in &service.method {
            out.extend(method.input_type.as_deref());
            out.extend(method.output_type.as_deref());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use prost_types::{
        FieldDescriptorProto, MethodDescriptorProto, ServiceDescriptorProto,
        field_descriptor_proto::Type,
    };

    use super::*;

    fn message(name: &str, field_type: Option<&str>) -> DescriptorProto {
        DescriptorProto {
            name: Some(name.to_owned()),
            field: field_type
                .map(|type_name| FieldDescriptorProto {
                    name: Some("value".to_owned()),
                    number: Some(1),
                    r#type: Some(Type::Message as i32),
                    type_name: Some(type_name.to_owned()),
                    ..Default::default()
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }

    /// As `@grpc/reflection` answers: one file per package, no imports declared.
    fn grpc_js_files() -> Vec<FileDescriptorProto> {
        vec![
            FileDescriptorProto {
                name: Some("shop.proto".to_owned()),
                package: Some("shop".to_owned()),
                syntax: Some("proto3".to_owned()),
                message_type: vec![
                    message("Cart", Some(".common.Money")),
                    message("Details", Some(".google.protobuf.Struct")),
                ],
                service: vec![ServiceDescriptorProto {
                    name: Some("Shop".to_owned()),
                    method: vec![MethodDescriptorProto {
                        name: Some("Get".to_owned()),
                        input_type: Some(".shop.Cart".to_owned()),
                        output_type: Some(".shop.Details".to_owned()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            },
            FileDescriptorProto {
                name: Some("common.proto".to_owned()),
                package: Some("common".to_owned()),
                syntax: Some("proto3".to_owned()),
                message_type: vec![message("Money", None)],
                ..Default::default()
            },
        ]
    }

    #[test]
    fn undeclared_imports_are_added_from_the_files_sent_and_the_well_known_ones() {
        let mut files: Vec<Vec<u8>> = grpc_js_files()
            .iter()
            .map(prost::Message::encode_to_vec)
            .collect();
        let added = add_undeclared(&mut files);
        assert_eq!(
            added,
            [
                "shop.proto: common.proto",
                "shop.proto: google/protobuf/struct.proto"
            ]
        );
        let mut set = Vec::new();
        for bytes in &files {
            prost::encoding::bytes::encode(1, bytes, &mut set);
        }
        let pool = DescriptorPool::decode(set.as_slice()).expect("links");
        assert!(pool.get_service_by_name("shop.Shop").is_some());
    }

    #[test]
    fn files_that_import_what_they_use_are_left_alone() {
        let mut files: Vec<Vec<u8>> = grpc_js_files()
            .iter()
            .map(prost::Message::encode_to_vec)
            .collect();
        files.remove(0);
        let before = files.clone();
        assert!(add_undeclared(&mut files).is_empty());
        assert_eq!(files, before);
    }
}
