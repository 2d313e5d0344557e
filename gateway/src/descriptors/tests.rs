//! Descriptor sets, reflection answers and the pools linked from them.

use super::*;

#[test]
fn a_server_with_only_health_gets_the_flag_to_copy() {
    let listed = [
        "grpc.health.v1.Health".to_owned(),
        "grpc.reflection.v1.ServerReflection".to_owned(),
        "grpc.reflection.v1alpha.ServerReflection".to_owned(),
    ];
    let error = no_api_services(&listed).to_string();
    assert!(
        error.ends_with("add --service grpc.health.v1.Health"),
        "{error}"
    );
    let error = no_api_services(&listed[1..]).to_string();
    assert!(error.contains("no RPCs to serve"), "{error}");
}

#[test]
fn an_editions_file_from_reflection_is_refused_by_name() {
    let file = prost_types::FileDescriptorProto {
        name: Some("ed/v1/ed.proto".to_owned()),
        package: Some("ed.v1".to_owned()),
        syntax: Some("editions".to_owned()),
        ..Default::default()
    };
    let error = link(&link_set([file.encode_to_vec()]))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("ed/v1/ed.proto") && error.contains("editions"),
        "{error}"
    );
}

#[test]
fn well_known_files_come_from_the_built_in_pool() {
    let bytes = well_known_file("google/protobuf/timestamp.proto").unwrap();
    let (set, _) = link(&link_set([bytes])).unwrap();
    let pool = set.files().whole_pool().unwrap();
    assert!(
        pool.get_message_by_name("google.protobuf.Timestamp")
            .is_some()
    );
    assert!(well_known_file("acme/v1/acme.proto").is_none());
}

#[test]
fn comments_are_indexed_and_the_pool_holds_no_source_info() {
    use prost_types::{DescriptorProto, FileDescriptorProto, SourceCodeInfo, source_code_info};
    let file = FileDescriptorProto {
        name: Some("acme/v1/acme.proto".to_owned()),
        package: Some("acme.v1".to_owned()),
        syntax: Some("proto3".to_owned()),
        message_type: vec![DescriptorProto {
            name: Some("Order".to_owned()),
            ..Default::default()
        }],
        source_code_info: Some(SourceCodeInfo {
            location: vec![source_code_info::Location {
                path: vec![4, 0],
                span: vec![2, 0, 14],
                leading_comments: Some(" An order of goods.\n".to_owned()),
                ..Default::default()
            }],
        }),
        ..Default::default()
    };
    let (set, comments) = link(&link_set([file.encode_to_vec()])).unwrap();
    let pool = set.files().package_pool("acme.v1").unwrap();
    assert_eq!(
        comments.get("acme/v1/acme.proto", &[4, 0]),
        Some("An order of goods.")
    );
    assert!(pool.get_message_by_name("acme.v1.Order").is_some());
    assert!(
        pool.file_descriptor_protos()
            .all(|file| file.source_code_info.is_none())
    );
}

#[test]
fn default_selection_skips_reflection_and_health() {
    let descriptors = Descriptors {
        set: Arc::new(SetPools::decode(&[]).unwrap().0),
        comments: Arc::default(),
        fingerprint: 0,
        services: vec![
            "grpc.reflection.v1.ServerReflection".to_owned(),
            "grpc.health.v1.Health".to_owned(),
            "acme.v1.Shop".to_owned(),
        ],
    };
    assert_eq!(descriptors.select(&[]).unwrap(), ["acme.v1.Shop"]);
    let error = descriptors
        .select(&["acme.v1.Nope".to_owned()])
        .unwrap_err()
        .to_string();
    assert!(error.contains("no such service"), "{error}");
    assert!(error.contains("acme.v1.Shop"), "{error}");
}

/// A descriptor-set file read again with the fingerprint of what it held is not decoded again;
/// once it changes, it is.
#[test]
fn an_unchanged_file_is_not_decoded_again() {
    use prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};
    let set = |message: &str| {
        FileDescriptorSet {
            file: vec![FileDescriptorProto {
                name: Some("acme/v1/acme.proto".to_owned()),
                package: Some("acme.v1".to_owned()),
                syntax: Some("proto3".to_owned()),
                message_type: vec![DescriptorProto {
                    name: Some(message.to_owned()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
        .encode_to_vec()
    };
    let path = std::env::temp_dir().join(format!(
        "grpc-mcp-gateway-fingerprint-{}.binpb",
        std::process::id()
    ));
    std::fs::write(&path, set("Order")).unwrap();
    let first = Descriptors::from_file(&path).unwrap();
    let pool = |descriptors: &Descriptors| descriptors.set.files().package_pool("acme.v1").unwrap();
    assert!(pool(&first).get_message_by_name("acme.v1.Order").is_some());
    assert!(
        Descriptors::from_file_unless(&path, Some(first.fingerprint))
            .unwrap()
            .is_none()
    );
    std::fs::write(&path, set("Invoice")).unwrap();
    let changed = Descriptors::from_file_unless(&path, Some(first.fingerprint))
        .unwrap()
        .expect("the changed file is decoded");
    assert_ne!(changed.fingerprint, first.fingerprint);
    assert!(
        pool(&changed)
            .get_message_by_name("acme.v1.Invoice")
            .is_some()
    );
    let _ = std::fs::remove_file(&path);
}

/// A fingerprint taken of a set written a part at a time, as a reload reads a file, is the
/// fingerprint of the whole set: else every reload would read an unchanged file twice.
#[test]
fn a_fingerprint_taken_in_parts_is_that_of_the_whole() {
    use std::io::Write as _;
    let set: Vec<u8> = (0..100_000u32).map(|at| (at * 7 % 251) as u8).collect();
    let services = ["acme.v1.Shop".to_owned()];
    for part in [1, 7, 8, 64, 8_192, 100_000] {
        let mut streamed = Fingerprint::default();
        for chunk in set.chunks(part) {
            streamed.write_all(chunk).unwrap();
        }
        assert_eq!(
            streamed.finish(&services),
            fingerprint(&set, &services),
            "parts of {part} bytes"
        );
    }
    assert_ne!(
        fingerprint(&set, &services),
        fingerprint(&set[1..], &services)
    );
    assert_ne!(fingerprint(&set, &services), fingerprint(&set, &[]));
}

/// A descriptor set written without `--include_imports` is refused naming the file, the import
/// it lacks, and how to write it whole.
#[test]
fn a_set_without_its_imports_says_which_import_is_missing() {
    use prost_types::{FileDescriptorProto, FileDescriptorSet};
    let set = FileDescriptorSet {
        file: vec![FileDescriptorProto {
            name: Some("acme/v1/acme.proto".to_owned()),
            package: Some("acme.v1".to_owned()),
            syntax: Some("proto3".to_owned()),
            dependency: vec!["acme/v1/money.proto".to_owned()],
            ..Default::default()
        }],
    };
    let path = std::env::temp_dir().join(format!(
        "grpc-mcp-gateway-no-imports-{}.binpb",
        std::process::id()
    ));
    std::fs::write(&path, set.encode_to_vec()).unwrap();
    let error = Descriptors::from_file(&path).err().map(|e| e.to_string());
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        error.as_deref(),
        Some(
            format!(
                "--descriptor-set {}: not a complete FileDescriptorSet (`acme/v1/acme.proto` \
                 imports `acme/v1/money.proto`, which the descriptor set does not hold); write \
                 it with `protoc --include_imports --descriptor_set_out=FILE` or `buf build -o \
                 FILE`",
                path.display()
            )
            .as_str()
        )
    );
}
