//! A descriptor pool built from encoded files one file at a time, each after the files it
//! imports.
//!
//! prost-reflect builds the files of one call together: `DescriptorPool::decode` first decodes
//! the whole set into its own types, whose lists grow by doubling, and holds that copy while it
//! copies each file into the pool. At 10,000 tools that copy is the largest allocation beside
//! the pool (docs/benchmark-history.md), and the process keeps the memory. One file at a time, only one file's copy is held besides
//! the pool. The pool is the same: the same files in the same order when the set lists each
//! file after its imports, as `protoc --include_imports` and `buf build` write it.

use std::collections::HashMap;

use prost_reflect::DescriptorPool;

/// One encoded `FileDescriptorProto`, with the names it needs to be put in order.
#[derive(Debug, Clone)]
pub(crate) struct EncodedFile {
    /// Its `name`.
    pub(crate) name: String,
    /// Its `dependency` list: the files it imports.
    pub(crate) dependencies: Vec<String>,
    /// The encoded file.
    pub(crate) bytes: Vec<u8>,
}

/// The pool of `files`: each is added after the files of the set it imports (in the set's order
/// otherwise), so a set may list them in any order, as `DescriptorPool::decode` allows.
///
/// # Errors
///
/// Two different files have the same name, a file imports one the set does not hold, or
/// prost-reflect refuses a file: it does not decode, or does not link. The text names the file.
pub(crate) fn build(files: Vec<EncodedFile>) -> Result<DescriptorPool, String> {
    build_on(DescriptorPool::new(), files)
}

/// [`build`] on top of `base`: an import the files do not hold may be one of `base`'s, and a
/// file `base` holds already is left out.
///
/// # Errors
///
/// As for [`build`].
pub(crate) fn build_on(
    mut pool: DescriptorPool,
    files: Vec<EncodedFile>,
) -> Result<DescriptorPool, String> {
    let order = dependency_order(&files, &pool)?;
    let mut files: Vec<Option<EncodedFile>> = files.into_iter().map(Some).collect();
    for at in order {
        let Some(file) = files.get_mut(at).and_then(Option::take) else {
            continue;
        };
        if pool.get_file_by_name(&file.name).is_some() {
            continue;
        }
        pool.decode_file_descriptor_proto(file.bytes.as_slice())
            .map_err(|e| format!("{}: {e}", file.name))?;
    }
    Ok(pool)
}

/// The indexes of `files` with every file after the files it imports, and otherwise in the
/// given order. A file listed twice, byte for byte, is added once. An import cycle is left for
/// prost-reflect to report.
///
/// # Errors
///
/// Two different files have one name, or a file imports one neither the set nor `base` holds.
fn dependency_order(files: &[EncodedFile], base: &DescriptorPool) -> Result<Vec<usize>, String> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(files.len());
    let mut listed = Vec::with_capacity(files.len());
    for (at, file) in files.iter().enumerate() {
        match index.get(file.name.as_str()) {
            Some(&first) if files[first].bytes == file.bytes => {}
            Some(_) => {
                return Err(two_files_named(&file.name));
            }
            None => {
                index.insert(&file.name, at);
                listed.push(at);
            }
        }
    }
    // Depth first, with a stack of its own (an import chain can be long), each file put in the
    // order once every file it imports is.
    let mut seen = vec![false; files.len()];
    let mut order = Vec::with_capacity(listed.len());
    for root in listed {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut stack = vec![(root, 0_usize)];
        while let Some(&(at, next)) = stack.last() {
            match files[at].dependencies.get(next) {
                Some(import) => {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    let Some(&dependency) = index.get(import.as_str()) else {
                        if base.get_file_by_name(import).is_some() {
                            continue;
                        }
                        return Err(missing_import(&files[at].name, import));
                    };
                    if !seen[dependency] {
                        seen[dependency] = true;
                        stack.push((dependency, 0));
                    }
                }
                None => {
                    order.push(at);
                    stack.pop();
                }
            }
        }
    }
    Ok(order)
}

/// The refusal of a set with two different files named `name`.
pub(crate) fn two_files_named(name: &str) -> String {
    format!("the descriptor set has two different files named `{name}`")
}

/// The refusal of a set whose file `file` imports `import`, which it does not hold.
pub(crate) fn missing_import(file: &str, import: &str) -> String {
    format!("`{file}` imports `{import}`, which the descriptor set does not hold")
}

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};

    use super::*;

    /// `name`, importing `imports`, with a message `M` whose field has the type of each
    /// imported file's message.
    fn file(name: &str, imports: &[&str]) -> EncodedFile {
        let package = name.trim_end_matches(".proto");
        let proto = FileDescriptorProto {
            name: Some(name.to_owned()),
            package: Some(package.to_owned()),
            dependency: imports.iter().map(|i| (*i).to_owned()).collect(),
            message_type: vec![DescriptorProto {
                name: Some("M".to_owned()),
                field: imports
                    .iter()
                    .zip(1..)
                    .map(|(import, number)| FieldDescriptorProto {
                        name: Some(format!("f{number}")),
                        number: Some(number),
                        label: Some(1),
                        r#type: Some(11),
                        type_name: Some(format!(".{}.M", import.trim_end_matches(".proto"))),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            syntax: Some("proto3".to_owned()),
            ..Default::default()
        };
        EncodedFile {
            name: name.to_owned(),
            dependencies: proto.dependency.clone(),
            bytes: proto.encode_to_vec(),
        }
    }

    fn names(pool: &DescriptorPool) -> Vec<String> {
        pool.files().map(|f| f.name().to_owned()).collect()
    }

    #[test]
    fn files_in_import_order_keep_their_order_and_give_the_pool_a_whole_set_gives() {
        let files = vec![
            file("a.proto", &[]),
            file("b.proto", &["a.proto"]),
            file("c.proto", &["a.proto", "b.proto"]),
        ];
        let set = prost_types::FileDescriptorSet {
            file: files
                .iter()
                .map(|f| FileDescriptorProto::decode(f.bytes.as_slice()).unwrap())
                .collect(),
        };
        let whole = DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap();
        let pool = build(files).unwrap();
        assert_eq!(names(&pool), ["a.proto", "b.proto", "c.proto"]);
        assert_eq!(names(&pool), names(&whole));
        let protos = |p: &DescriptorPool| p.file_descriptor_protos().cloned().collect::<Vec<_>>();
        assert_eq!(protos(&pool), protos(&whole));
    }

    #[test]
    fn a_file_listed_before_its_imports_is_added_after_them() {
        let files = vec![
            file("c.proto", &["b.proto", "a.proto"]),
            file("b.proto", &["a.proto"]),
            file("a.proto", &[]),
        ];
        let pool = build(files).unwrap();
        assert_eq!(names(&pool), ["a.proto", "b.proto", "c.proto"]);
        let field = pool
            .get_message_by_name("c.M")
            .unwrap()
            .get_field_by_name("f1")
            .unwrap();
        assert_eq!(field.kind().as_message().unwrap().full_name(), "b.M");
    }

    #[test]
    fn a_file_listed_twice_is_added_once_and_two_different_files_of_one_name_are_refused() {
        let pool = build(vec![file("a.proto", &[]), file("a.proto", &[])]).unwrap();
        assert_eq!(names(&pool), ["a.proto"]);
        let mut other = file("a.proto", &[]);
        other.bytes.push(0x08); // a field more: different bytes under the same name
        let error = build(vec![file("a.proto", &[]), other]).unwrap_err();
        assert_eq!(
            error,
            "the descriptor set has two different files named `a.proto`"
        );
    }

    #[test]
    fn a_missing_import_and_an_import_cycle_are_refused_naming_the_file() {
        let error = build(vec![file("b.proto", &["a.proto"])]).unwrap_err();
        assert_eq!(
            error,
            "`b.proto` imports `a.proto`, which the descriptor set does not hold"
        );
        let error = build(vec![
            file("a.proto", &["b.proto"]),
            file("b.proto", &["a.proto"]),
        ])
        .unwrap_err();
        assert!(
            error.starts_with("b.proto: ") || error.starts_with("a.proto: "),
            "{error}"
        );
    }
}
