//! Descriptors the tests of tools made from descriptors share (the runtime's, of its seam for
//! them, and `tonic-mcp-dynamic`'s): small files and pools built in code, no `protoc` run.

use prost::Message as _;
use prost_types::{
    DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
    MethodDescriptorProto, ServiceDescriptorProto,
    field_descriptor_proto::{Label, Type},
};
use tonic_mcp::{DescriptorPool, schema::Options};

/// One file of `package` with a message `M` and a service `Accounts { Get, List }`.
pub fn file(package: &str) -> FileDescriptorProto {
    let method = |name: &str| MethodDescriptorProto {
        name: Some(name.to_owned()),
        input_type: Some(format!(".{package}.M")),
        output_type: Some(format!(".{package}.M")),
        ..Default::default()
    };
    FileDescriptorProto {
        name: Some(format!("{}.proto", package.replace('.', "/"))),
        package: Some(package.to_owned()),
        syntax: Some("proto3".to_owned()),
        message_type: vec![DescriptorProto {
            name: Some("M".to_owned()),
            ..Default::default()
        }],
        service: vec![ServiceDescriptorProto {
            name: Some("Accounts".to_owned()),
            method: vec![method("Get"), method("List")],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Services of 300 methods each over two messages that hold each other, in `packages`.
pub fn large_pool(packages: &[&str]) -> DescriptorPool {
    let field = |name: &str, number: i32, kind: Type, type_name: Option<String>, label: Label| {
        FieldDescriptorProto {
            name: Some(name.to_owned()),
            number: Some(number),
            r#type: Some(kind as i32),
            type_name,
            label: Some(label as i32),
            ..Default::default()
        }
    };
    let files = packages.iter().map(|package| {
        let a = format!(".{package}.A");
        let b = format!(".{package}.B");
        let method = |i: usize| MethodDescriptorProto {
            name: Some(format!("Do{i}")),
            input_type: Some(if i.is_multiple_of(2) {
                a.clone()
            } else {
                b.clone()
            }),
            output_type: Some(if i.is_multiple_of(3) {
                a.clone()
            } else {
                b.clone()
            }),
            ..Default::default()
        };
        FileDescriptorProto {
            name: Some(format!("{}.proto", package.replace('.', "/"))),
            package: Some((*package).to_owned()),
            syntax: Some("proto3".to_owned()),
            message_type: vec![
                DescriptorProto {
                    name: Some("A".to_owned()),
                    field: vec![
                        field("s", 1, Type::String, None, Label::Optional),
                        field("b", 2, Type::Message, Some(b.clone()), Label::Optional),
                        field("bs", 3, Type::Message, Some(b.clone()), Label::Repeated),
                    ],
                    ..Default::default()
                },
                DescriptorProto {
                    name: Some("B".to_owned()),
                    field: vec![
                        field("n", 1, Type::Int64, None, Label::Optional),
                        field("a", 2, Type::Message, Some(a.clone()), Label::Optional),
                    ],
                    ..Default::default()
                },
            ],
            service: vec![ServiceDescriptorProto {
                name: Some("Large".to_owned()),
                method: (0..300).map(method).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    });
    let set = FileDescriptorSet {
        file: files.collect(),
    };
    DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap()
}

/// A pool whose service `s.v1.Feed` has a server-streaming `Watch` whose request has a field
/// with the JSON name of the stream control, and a unary `Get` that is fine (with
/// `json_names`).
pub fn pool_with_a_bad_schema() -> DescriptorPool {
    let mut file = file("s.v1");
    file.message_type[0].field.push(FieldDescriptorProto {
        name: Some("stream".to_owned()),
        number: Some(1),
        r#type: Some(Type::String as i32),
        label: Some(Label::Optional as i32),
        json_name: Some(tonic_mcp::schema::stream_control::STREAM_CONTROL_KEY.to_owned()),
        ..Default::default()
    });
    let service = &mut file.service[0];
    service.name = Some("Feed".to_owned());
    service.method[1].name = Some("Watch".to_owned());
    service.method[1].server_streaming = Some(true);
    let set = FileDescriptorSet { file: vec![file] };
    DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap()
}

/// A transport for tools that are never called.
pub fn never_called() -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy()
}

/// Options under which [`pool_with_a_bad_schema`]'s `Watch` can have no schemas: property
/// names are JSON names, so the field's is the stream control's.
pub fn json_names() -> Options {
    Options {
        json_names: true,
        ..Options::default()
    }
}
