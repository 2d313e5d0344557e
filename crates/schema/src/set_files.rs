//! A descriptor set kept as its encoded files, each without its source info, from which the
//! pool of one package (its files and everything they import) is built when it is needed.
//!
//! A prost-reflect pool is many times the size of the encoded set, and the pool of one package
//! a small part of the whole set's. A server that builds a package's pool when one of its
//! tools needs it holds the pools of the packages in use, not the set's.

use std::collections::HashMap;

use prost::Message as _;
use prost_reflect::DescriptorPool;

use crate::{
    comments::Comments,
    file_pool::{self, EncodedFile},
    source_info::{self, SetError},
};

/// What is read of a file to index it: its name, package, imports, messages, services and
/// syntax. Every other field is skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct Outline {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, optional, tag = "2")]
    package: Option<String>,
    #[prost(string, repeated, tag = "3")]
    dependency: Vec<String>,
    #[prost(message, repeated, tag = "4")]
    message_type: Vec<MessageOutline>,
    #[prost(message, repeated, tag = "6")]
    service: Vec<Named>,
    #[prost(string, optional, tag = "12")]
    syntax: Option<String>,
}

/// A message's name and nested messages.
#[derive(Clone, PartialEq, prost::Message)]
struct MessageOutline {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(message, repeated, tag = "3")]
    nested_type: Vec<MessageOutline>,
}

/// A service's name.
#[derive(Clone, PartialEq, prost::Message)]
struct Named {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
}

/// One file of the set.
#[derive(Debug)]
struct SetFile {
    name: Box<str>,
    package: Box<str>,
    /// The files it imports, by index.
    imports: Box<[u32]>,
    /// The file, without its source info.
    bytes: Box<[u8]>,
}

/// A descriptor set kept as its encoded files (see the module's documentation).
#[derive(Debug)]
pub struct SetFiles {
    files: Vec<SetFile>,
    /// The files of each package, by index.
    packages: HashMap<Box<str>, Box<[u32]>>,
    /// The file that defines each message, by the message's full name.
    messages: HashMap<Box<str>, u32>,
    /// Every service's full name, in the order of the set.
    services: Vec<String>,
    /// Whether each pool is built on prost-reflect's built-in pool of the well-known types
    /// ([`decode_on_well_known`](Self::decode_on_well_known)).
    on_well_known: bool,
}

impl SetFiles {
    /// The files of an encoded `FileDescriptorSet`, each without its source info, and the
    /// comments that source info held. Editions files are refused by name, as
    /// [`decode_set`](source_info::decode_set) refuses them; a file listed twice byte for
    /// byte is kept once. Nothing is linked here: a package's pool is linked when it is built
    /// ([`package_pool`](Self::package_pool)), and [`check`](Self::check) links them all.
    ///
    /// # Errors
    ///
    /// The bytes do not decode, a file is an editions file, two different files have one
    /// name, or a file imports one the set does not hold.
    pub fn decode(bytes: &[u8]) -> Result<(SetFiles, Comments), SetError> {
        Self::decode_files(bytes, false)
    }

    /// As [`decode`](Self::decode), for a set that may leave out the well-known types
    /// (`google/protobuf/*.proto`, `descriptor.proto` included), as generated code embeds its
    /// package's files: each pool is built on prost-reflect's built-in pool, which holds them
    /// all, as `DescriptorPool::global()` with the set decoded on top would be.
    ///
    /// # Errors
    ///
    /// As for [`decode`](Self::decode).
    pub fn decode_on_well_known(bytes: &[u8]) -> Result<(SetFiles, Comments), SetError> {
        Self::decode_files(bytes, true)
    }

    fn decode_files(bytes: &[u8], on_well_known: bool) -> Result<(SetFiles, Comments), SetError> {
        let link = |e: prost::DecodeError| SetError::Link(e.to_string());
        let base = on_well_known.then(DescriptorPool::global);
        let encoded = source_info::set_files(bytes)?;
        let mut comments = Comments::default();
        let mut outlines = Vec::with_capacity(encoded.len());
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(encoded.len());
        let mut index: HashMap<String, u32> = HashMap::with_capacity(encoded.len());
        for file in encoded {
            source_info::index_comments(file, &mut comments).map_err(link)?;
            let bytes = source_info::without_source_info(file);
            let outline = Outline::decode(bytes.as_slice()).map_err(link)?;
            let name = outline.name().to_owned();
            match index.get(&name) {
                Some(&first) if kept[first as usize] == bytes => continue,
                Some(_) => {
                    return Err(SetError::Link(file_pool::two_files_named(&name)));
                }
                None => {
                    index.insert(name, u32::try_from(kept.len()).unwrap_or(u32::MAX));
                }
            }
            outlines.push(outline);
            kept.push(bytes);
        }
        crate::syntax::check(
            outlines
                .iter()
                .map(|outline| (outline.name(), outline.syntax.as_deref())),
        )
        .map_err(|e| SetError::Syntax(e.to_string()))?;
        let mut set = SetFiles {
            files: Vec::with_capacity(kept.len()),
            packages: HashMap::new(),
            messages: HashMap::new(),
            services: Vec::new(),
            on_well_known,
        };
        let mut packages: HashMap<Box<str>, Vec<u32>> = HashMap::new();
        for (at, (outline, bytes)) in (0_u32..).zip(outlines.into_iter().zip(kept)) {
            let imports = outline
                .dependency
                .iter()
                .filter(|import| {
                    // Not a well-known file the pools are built on.
                    index.contains_key(*import)
                        || base
                            .as_ref()
                            .is_none_or(|base| base.get_file_by_name(import).is_none())
                })
                .map(|import| {
                    index.get(import).copied().ok_or_else(|| {
                        SetError::Link(file_pool::missing_import(outline.name(), import))
                    })
                })
                .collect::<Result<_, _>>()?;
            let package = outline.package();
            let prefix = if package.is_empty() {
                String::new()
            } else {
                format!("{package}.")
            };
            for message in &outline.message_type {
                index_messages(&mut set.messages, &prefix, message, at);
            }
            set.services.extend(
                outline
                    .service
                    .iter()
                    .map(|service| format!("{prefix}{}", service.name())),
            );
            packages.entry(package.into()).or_default().push(at);
            set.files.push(SetFile {
                name: outline.name().into(),
                package: package.into(),
                imports,
                bytes: bytes.into_boxed_slice(),
            });
        }
        set.packages = packages
            .into_iter()
            .map(|(package, files)| (package, files.into_boxed_slice()))
            .collect();
        Ok((set, comments))
    }

    /// Every service's full name, in the order of the set.
    pub fn services(&self) -> &[String] {
        &self.services
    }

    /// The package of the file that defines the message `full_name`.
    pub fn package_of_message(&self, full_name: &str) -> Option<&str> {
        let file = self.files.get(*self.messages.get(full_name)? as usize)?;
        Some(&file.package)
    }

    /// The pool of the files of `package` and every file they import, built now.
    ///
    /// # Errors
    ///
    /// The set has no file of `package`, or prost-reflect refuses a file (the text names it).
    pub fn package_pool(&self, package: &str) -> Result<DescriptorPool, String> {
        let files = self
            .packages
            .get(package)
            .ok_or_else(|| format!("the descriptor set has no file of package `{package}`"))?;
        self.pool_of(files)
    }

    /// The pool of every file of the set, built now: what a pool of the whole set would be.
    ///
    /// # Errors
    ///
    /// As for [`package_pool`](Self::package_pool).
    pub fn whole_pool(&self) -> Result<DescriptorPool, String> {
        let all: Vec<u32> = (0_u32..).take(self.files.len()).collect();
        self.pool_of(&all)
    }

    /// Links every package's pool once, one after another, each let go when linked: the errors
    /// a pool of the whole set would report, without holding it.
    ///
    /// # Errors
    ///
    /// The first package whose files do not link, naming the file.
    pub fn check(&self) -> Result<(), String> {
        let mut packages: Vec<&str> = self.packages.keys().map(AsRef::as_ref).collect();
        packages.sort_unstable();
        for package in packages {
            self.package_pool(package)?;
        }
        Ok(())
    }

    /// The pool of `roots` and every file they import, each file after its imports.
    fn pool_of(&self, roots: &[u32]) -> Result<DescriptorPool, String> {
        let mut seen = vec![false; self.files.len()];
        let mut closure = Vec::new();
        let mut stack: Vec<u32> = roots.to_vec();
        while let Some(at) = stack.pop() {
            let Some(file) = self.files.get(at as usize) else {
                continue;
            };
            if std::mem::replace(&mut seen[at as usize], true) {
                continue;
            }
            closure.push(at);
            stack.extend(file.imports.iter().copied());
        }
        // In the set's order: `file_pool` puts each file after its imports.
        closure.sort_unstable();
        let base = if self.on_well_known {
            DescriptorPool::global()
        } else {
            DescriptorPool::new()
        };
        file_pool::build_on(
            base,
            closure
                .into_iter()
                .filter_map(|at| self.files.get(at as usize))
                .map(|file| EncodedFile {
                    name: file.name.to_string(),
                    dependencies: file
                        .imports
                        .iter()
                        .filter_map(|&at| self.files.get(at as usize))
                        .map(|import| import.name.to_string())
                        .collect(),
                    bytes: file.bytes.to_vec(),
                })
                .collect(),
        )
    }
}

/// Indexes `message` and its nested messages, under `prefix`, as defined by file `file`.
fn index_messages(
    messages: &mut HashMap<Box<str>, u32>,
    prefix: &str,
    message: &MessageOutline,
    file: u32,
) {
    let full_name = format!("{prefix}{}", message.name());
    let nested = format!("{full_name}.");
    for inner in &message.nested_type {
        index_messages(messages, &nested, inner, file);
    }
    messages.insert(full_name.into(), file);
}

#[cfg(test)]
mod tests;
