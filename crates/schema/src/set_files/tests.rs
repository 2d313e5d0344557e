use prost::Message as _;
use prost_types::{
    DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
    ServiceDescriptorProto, SourceCodeInfo, source_code_info,
};

use super::*;

/// `name` in `package`, importing `imports`, with a message `M` (nested `N`) whose fields have
/// the types `M` of `uses`, and a service `S` when `service`.
fn file(
    name: &str,
    package: &str,
    imports: &[&str],
    uses: &[&str],
    service: bool,
) -> FileDescriptorProto {
    FileDescriptorProto {
        name: Some(name.to_owned()),
        package: Some(package.to_owned()),
        dependency: imports.iter().map(|i| (*i).to_owned()).collect(),
        message_type: vec![DescriptorProto {
            name: Some("M".to_owned()),
            field: uses
                .iter()
                .zip(1..)
                .map(|(used, number)| FieldDescriptorProto {
                    name: Some(format!("f{number}")),
                    number: Some(number),
                    label: Some(1),
                    r#type: Some(11),
                    type_name: Some(format!(".{used}.M")),
                    ..Default::default()
                })
                .collect(),
            nested_type: vec![DescriptorProto {
                name: Some("N".to_owned()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        service: if service {
            vec![ServiceDescriptorProto {
                name: Some("S".to_owned()),
                ..Default::default()
            }]
        } else {
            Vec::new()
        },
        syntax: Some("proto3".to_owned()),
        source_code_info: Some(SourceCodeInfo {
            location: vec![source_code_info::Location {
                path: vec![4, 0],
                leading_comments: Some(format!(" The M of {package}.\n")),
                ..Default::default()
            }],
        }),
        ..Default::default()
    }
}

fn set(files: Vec<FileDescriptorProto>) -> Vec<u8> {
    FileDescriptorSet { file: files }.encode_to_vec()
}

fn names(pool: &DescriptorPool) -> Vec<String> {
    pool.files().map(|f| f.name().to_owned()).collect()
}

/// `common` is imported by `a` and `b`; `other` by nothing.
fn sample() -> Vec<u8> {
    let mut a2 = file("a2.proto", "a", &[], &[], false);
    a2.message_type[0].name = Some("M2".to_owned());
    set(vec![
        file("common.proto", "common", &[], &[], false),
        file("a1.proto", "a", &["common.proto"], &["common"], true),
        a2,
        file("b.proto", "b.v1", &["common.proto"], &["common"], true),
        file("other.proto", "other", &[], &[], false),
    ])
}

#[test]
fn a_package_pool_holds_its_files_and_their_imports_and_nothing_else() {
    let (files, comments) = SetFiles::decode(&sample()).unwrap();
    assert_eq!(files.services(), ["a.S", "b.v1.S"]);
    let a = files.package_pool("a").unwrap();
    assert_eq!(names(&a), ["common.proto", "a1.proto", "a2.proto"]);
    let b = files.package_pool("b.v1").unwrap();
    assert_eq!(names(&b), ["common.proto", "b.proto"]);
    assert!(b.get_message_by_name("a.M").is_none());
    assert_eq!(files.package_of_message("b.v1.M.N"), Some("b.v1"));
    assert_eq!(files.package_of_message("common.M"), Some("common"));
    assert_eq!(files.package_of_message("a.M2.N"), Some("a"));
    assert_eq!(files.package_of_message("nope.M"), None);
    let error = files.package_pool("nope").unwrap_err();
    assert_eq!(error, "the descriptor set has no file of package `nope`");
    // The comments are kept beside the files, which lose their source info.
    assert_eq!(comments.get("b.proto", &[4, 0]), Some("The M of b.v1."));
    assert!(
        b.file_descriptor_protos()
            .all(|f| f.source_code_info.is_none())
    );
    files.check().unwrap();
}

#[test]
fn the_whole_pool_is_the_pool_of_the_set() {
    let bytes = sample();
    let (files, _) = SetFiles::decode(&bytes).unwrap();
    let (whole, _) = source_info::decode_set(&bytes).unwrap();
    let protos = |p: &DescriptorPool| p.file_descriptor_protos().cloned().collect::<Vec<_>>();
    assert_eq!(protos(&files.whole_pool().unwrap()), protos(&whole));
}

#[test]
fn a_set_that_cannot_be_split_is_refused_naming_the_file() {
    let missing = set(vec![file("b.proto", "b", &["a.proto"], &[], false)]);
    assert_eq!(
        SetFiles::decode(&missing).unwrap_err(),
        SetError::Link(
            "`b.proto` imports `a.proto`, which the descriptor set does not hold".to_owned()
        )
    );
    let twice = set(vec![
        file("a.proto", "a", &[], &[], false),
        file("a.proto", "other", &[], &[], false),
    ]);
    assert_eq!(
        SetFiles::decode(&twice).unwrap_err(),
        SetError::Link("the descriptor set has two different files named `a.proto`".to_owned())
    );
    // The same file twice is kept once.
    let same = set(vec![
        file("a.proto", "a", &[], &[], true),
        file("a.proto", "a", &[], &[], true),
    ]);
    assert_eq!(SetFiles::decode(&same).unwrap().0.services(), ["a.S"]);
    // A type the package does not import does not link, when its pool is built.
    let unlinked = set(vec![file("a.proto", "a", &[], &["common"], true)]);
    let (files, _) = SetFiles::decode(&unlinked).unwrap();
    let error = files.package_pool("a").unwrap_err();
    assert!(error.starts_with("a.proto: "), "{error}");
    assert!(files.check().is_err());
    let mut edition = file("e.proto", "e", &[], &[], false);
    edition.syntax = Some("editions".to_owned());
    assert!(matches!(
        SetFiles::decode(&set(vec![edition])),
        Err(SetError::Syntax(_))
    ));
}

#[test]
fn a_set_without_the_well_known_files_is_built_on_them() {
    let mut uses = file(
        "t.proto",
        "t",
        &["google/protobuf/timestamp.proto"],
        &[],
        true,
    );
    uses.message_type[0].field.push(FieldDescriptorProto {
        name: Some("at".to_owned()),
        number: Some(1),
        label: Some(1),
        r#type: Some(11),
        type_name: Some(".google.protobuf.Timestamp".to_owned()),
        ..Default::default()
    });
    let bytes = set(vec![uses]);
    assert_eq!(
        SetFiles::decode(&bytes).unwrap_err(),
        SetError::Link(
            "`t.proto` imports `google/protobuf/timestamp.proto`, which the descriptor set does \
             not hold"
                .to_owned()
        )
    );
    let (files, _) = SetFiles::decode_on_well_known(&bytes).unwrap();
    let pool = files.package_pool("t").unwrap();
    let field = pool
        .get_message_by_name("t.M")
        .unwrap()
        .get_field_by_name("at")
        .unwrap();
    assert_eq!(
        field.kind().as_message().unwrap().full_name(),
        "google.protobuf.Timestamp"
    );
    // As `DescriptorPool::global()` with the set on top: every well-known type, imported or not.
    assert!(
        pool.get_message_by_name("google.protobuf.Duration")
            .is_some()
    );
}
