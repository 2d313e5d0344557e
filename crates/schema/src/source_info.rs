//! Source info kept out of descriptor pools. Descriptions are the only thing read from it, and
//! it is most of a descriptor set with comments (three quarters of googleapis'), which a pool
//! would hold twice. So the comments are indexed from the encoded files first, and the pool is
//! built from the files without it. prost-types cannot do this: it drops the extension options
//! (`google.api.*`, `rust_mcp.*`, `buf.validate`) that the generator reads, so the files stay
//! bytes and field 9 is cut from them on the wire.

use prost::Message as _;
use prost_reflect::DescriptorPool;

use crate::{
    comments::Comments,
    file_pool::{self, EncodedFile},
};

/// What is read of an encoded `FileDescriptorProto` before a pool is built of it: its name,
/// imports and syntax. Every other field is skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileHead {
    /// `name`.
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    /// `dependency`: the files it imports.
    #[prost(string, repeated, tag = "3")]
    pub dependency: Vec<String>,
    /// `syntax`.
    #[prost(string, optional, tag = "12")]
    pub syntax: Option<String>,
}

/// The name and source info of an encoded `FileDescriptorProto`, every other field skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct SourceInfo {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(message, optional, tag = "9")]
    source_code_info: Option<Locations>,
}

impl SourceInfo {
    fn add_to(&self, comments: &mut Comments) {
        if let Some(locations) = &self.source_code_info {
            comments.add_locations(
                self.name(),
                locations.location.iter().map(|l| {
                    (
                        l.path.as_slice(),
                        l.leading_comments.as_deref(),
                        l.trailing_comments.as_deref(),
                    )
                }),
            );
        }
    }
}

/// `SourceCodeInfo` with only what comments need: spans and detached comments are skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct Locations {
    #[prost(message, repeated, tag = "1")]
    location: Vec<Location>,
}

/// `SourceCodeInfo.Location`: its path and comments.
#[derive(Clone, PartialEq, prost::Message)]
struct Location {
    #[prost(int32, repeated, tag = "1")]
    path: Vec<i32>,
    #[prost(string, optional, tag = "3")]
    leading_comments: Option<String>,
    #[prost(string, optional, tag = "4")]
    trailing_comments: Option<String>,
}

/// Indexes the comments of one encoded `FileDescriptorProto` into `comments`.
///
/// # Errors
///
/// The bytes do not decode as a `FileDescriptorProto`.
pub fn index_comments(file: &[u8], comments: &mut Comments) -> Result<(), prost::DecodeError> {
    SourceInfo::decode(file)?.add_to(comments);
    Ok(())
}

/// An encoded `FileDescriptorProto` without its `source_code_info` (field 9), every other
/// field byte for byte (extension options included). Bytes that do not scan as protobuf are
/// returned whole, for the pool to report.
pub fn without_source_info(file: &[u8]) -> Vec<u8> {
    strip_field(file, 9).unwrap_or_else(|| file.to_vec())
}

/// Why an encoded `FileDescriptorSet` did not become a pool, in [`decode_set`]: callers word the
/// two cases differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError {
    /// A file is an editions file, refused by name (prost-reflect cannot read it).
    Syntax(String),
    /// The bytes do not decode, or the files do not link.
    Link(String),
}

/// The pool of an encoded `FileDescriptorSet`, built without the files' source info, and the
/// comments that source info held; editions files are refused by name first. The pool is built
/// one file at a time (`file_pool`), each file without its source info, every other byte kept.
///
/// # Errors
///
/// See [`SetError`].
pub fn decode_set(bytes: &[u8]) -> Result<(DescriptorPool, Comments), SetError> {
    let mut comments = Comments::default();
    let pool = decode_files(bytes, Some(&mut comments))?;
    Ok((pool, comments))
}

/// As [`decode_set`], with every file whole, source info included: for a caller that reads it
/// from the pool.
///
/// # Errors
///
/// See [`SetError`].
pub fn decode_set_with_source_info(bytes: &[u8]) -> Result<DescriptorPool, SetError> {
    decode_files(bytes, None)
}

/// The pool of the files of `bytes`, one file at a time; with `comments`, each file's source
/// info goes there instead of into the pool.
fn decode_files(
    bytes: &[u8],
    mut comments: Option<&mut Comments>,
) -> Result<DescriptorPool, SetError> {
    let link = |e: prost::DecodeError| SetError::Link(e.to_string());
    let encoded = set_files(bytes)?;
    let mut files = Vec::with_capacity(encoded.len());
    let mut syntaxes = Vec::with_capacity(encoded.len());
    for file in encoded {
        let head = FileHead::decode(file).map_err(link)?;
        let bytes = match comments.as_deref_mut() {
            Some(comments) => {
                index_comments(file, comments).map_err(link)?;
                without_source_info(file)
            }
            None => file.to_vec(),
        };
        syntaxes.push(head.syntax);
        files.push(EncodedFile {
            name: head.name.unwrap_or_default(),
            dependencies: head.dependency,
            bytes,
        });
    }
    crate::syntax::check(
        files
            .iter()
            .zip(&syntaxes)
            .map(|(file, syntax)| (file.name.as_str(), syntax.as_deref())),
    )
    .map_err(|e| SetError::Syntax(e.to_string()))?;
    // One file at a time: a whole set decoded at once is held twice while it is built.
    file_pool::build(files).map_err(SetError::Link)
}

/// The files of an encoded `FileDescriptorSet` (its field 1), each a slice of `bytes`: none
/// is copied, so a large set is held once while it is read.
///
/// # Errors
///
/// The bytes do not scan as protobuf.
pub(crate) fn set_files(bytes: &[u8]) -> Result<Vec<&[u8]>, SetError> {
    const FILE: u64 = 1 << 3 | 2;
    let mut files = Vec::new();
    scan(bytes, |key, _, value| {
        if key == FILE {
            files.push(value);
        }
    })
    .ok_or_else(|| SetError::Link("the bytes are not an encoded FileDescriptorSet".to_owned()))?;
    Ok(files)
}

/// `bytes` without the length-delimited field `number`, or `None` when they do not scan as
/// protobuf. The copy is allocated at its exact length: a set's files are kept this way, and
/// the field left out (source info) is most of a commented file.
fn strip_field(bytes: &[u8], number: u64) -> Option<Vec<u8>> {
    let mut kept = Vec::new();
    scan(bytes, |key, field, _| {
        if key != (number << 3 | 2) {
            kept.push(field);
        }
    })?;
    Some(kept.concat())
}

/// Calls `each` with every field of the encoded message `bytes`, in order: its key, the
/// field's bytes (key included) and its value's (a length-delimited field's contents).
/// `None` when the bytes do not scan as protobuf.
fn scan<'a>(bytes: &'a [u8], mut each: impl FnMut(u64, &'a [u8], &'a [u8])) -> Option<()> {
    fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *bytes.get(*at)?;
            *at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let key = varint(bytes, &mut at)?;
        let mut value = at;
        match key & 7 {
            0 => {
                varint(bytes, &mut at)?;
            }
            1 => at = at.checked_add(8)?,
            2 => {
                let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                value = at;
                at = at.checked_add(len)?;
            }
            5 => at = at.checked_add(4)?,
            // Groups never appear in a descriptor; leave such bytes to the pool.
            _ => return None,
        }
        each(key, bytes.get(start..at)?, bytes.get(value..at)?);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use prost_types::{
        DescriptorProto, FileDescriptorProto, FileDescriptorSet, SourceCodeInfo, source_code_info,
    };

    use super::*;

    #[test]
    fn a_set_loses_its_source_info_and_keeps_its_comments_and_every_other_byte() {
        let file = FileDescriptorProto {
            name: Some("acme/v1/acme.proto".to_owned()),
            package: Some("acme.v1".to_owned()),
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
        let set = FileDescriptorSet {
            file: vec![file.clone()],
        }
        .encode_to_vec();
        let (pool, comments) = decode_set(&set).unwrap();
        assert_eq!(
            comments.get("acme/v1/acme.proto", &[4, 0]),
            Some("An order of goods.")
        );
        let bare = FileDescriptorProto {
            source_code_info: None,
            ..file
        };
        assert_eq!(
            pool.file_descriptor_protos().cloned().collect::<Vec<_>>(),
            std::slice::from_ref(&bare)
        );
        assert_eq!(without_source_info(&file_bytes(&set)), bare.encode_to_vec());
        // Bytes that do not scan are left whole.
        assert_eq!(without_source_info(&[0x0f]), [0x0f]);
    }

    /// The one file of an encoded set, as bytes.
    fn file_bytes(set: &[u8]) -> Vec<u8> {
        set_files(set).unwrap()[0].to_vec()
    }
}
