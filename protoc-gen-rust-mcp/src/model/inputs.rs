//! What the model is built from: the request as protoc sends it (each file kept as raw bytes,
//! so that extension options survive) or a descriptor set, decoded into a descriptor pool with
//! the comments of every file indexed beside it.

use prost::Message as _;
use prost_reflect::DescriptorPool;
use prost_types::{FileDescriptorProto, FileDescriptorSet};
use tonic_mcp_schema::{comments::Comments, source_info};

use tonic_mcp_schema::error::{Error, Result};

/// The request as protoc sends it, keeping each file as raw bytes so that extension options can
/// be read (prost-types would drop them).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RawRequest {
    /// `CodeGeneratorRequest.file_to_generate`.
    #[prost(string, repeated, tag = "1")]
    pub file_to_generate: Vec<String>,
    /// `CodeGeneratorRequest.parameter`.
    #[prost(string, optional, tag = "2")]
    pub parameter: Option<String>,
    /// `CodeGeneratorRequest.proto_file`, undecoded.
    #[prost(bytes = "vec", repeated, tag = "15")]
    pub proto_file: Vec<Vec<u8>>,
}

/// The decoded inputs the model is built from.
#[derive(Debug)]
pub struct Inputs {
    /// Files to generate.
    pub files_to_generate: Vec<String>,
    /// The pool with extension options kept. Built from the request, its files have no source
    /// info: their comments are in `comments`.
    pub pool: DescriptorPool,
    /// The comments of every file.
    pub comments: Comments,
}

impl Inputs {
    /// Decodes the files of a request and builds the descriptor pool, consuming the request:
    /// each file's bytes are freed once the pool has them.
    pub fn from_raw(request: RawRequest) -> Result<Inputs> {
        Self::from_files(request.file_to_generate, request.proto_file)
    }

    /// Source info is read into [`Comments`] and left out of the pool: it is most of a big
    /// request, and the pool would hold it twice (its own form and prost-types').
    fn from_files<B: AsRef<[u8]>>(files_to_generate: Vec<String>, files: Vec<B>) -> Result<Inputs> {
        let mut names = Vec::with_capacity(files.len());
        for bytes in &files {
            let header = source_info::FileHead::decode(bytes.as_ref())
                .map_err(|e| Error::Descriptor(format!("a proto_file does not decode: {e}")))?;
            names.push(header);
        }
        tonic_mcp_schema::syntax::check(names.iter().map(|h| (h.name(), h.syntax.as_deref())))?;
        let mut comments = Comments::default();
        let mut pool = DescriptorPool::new();
        // One file at a time, so that only one file's source info is decoded at once.
        for (bytes, header) in files.into_iter().zip(names) {
            let bytes = bytes.as_ref();
            let name = header.name();
            source_info::index_comments(bytes, &mut comments)
                .map_err(|e| Error::Descriptor(format!("{name}: {e}")))?;
            let stripped = source_info::without_source_info(bytes);
            guard_panic(name, || {
                pool.decode_file_descriptor_proto(stripped.as_slice())
            })?
            .map_err(|e| Error::Descriptor(format!("{name}: {e}")))?;
        }
        Ok(Inputs {
            files_to_generate,
            pool,
            comments,
        })
    }

    /// From an already-parsed descriptor set (the `build.rs` path).
    pub fn from_descriptor_set(bytes: &[u8], files_to_generate: Vec<String>) -> Result<Inputs> {
        let set = FileDescriptorSet::decode(bytes)
            .map_err(|e| Error::Descriptor(format!("the descriptor set does not decode: {e}")))?;
        tonic_mcp_schema::syntax::check(set.file.iter().map(|f| (f.name(), f.syntax.as_deref())))?;
        drop(set);
        let mut pool = DescriptorPool::new();
        guard_panic("the descriptor set", || {
            pool.decode_file_descriptor_set(bytes)
        })?
        .map_err(|e| Error::Descriptor(e.to_string()))?;
        let comments = Comments::index(&pool);
        Ok(Inputs {
            files_to_generate,
            pool,
            comments,
        })
    }

    /// Every file, as prost-types sees it, in request order.
    pub fn files(&self) -> impl ExactSizeIterator<Item = &FileDescriptorProto> + '_ {
        self.pool.file_descriptor_protos()
    }
}

/// Runs prost-reflect on a descriptor `element`. prost-reflect 0.16 can panic while it
/// describes some invalid descriptors (an index past the files it has added, when the error
/// is in the file being added); the plugin reports that as an error naming the file instead.
fn guard_panic<T>(element: &str, run: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).map_err(|_| {
        Error::Descriptor(format!(
            "{element}: the descriptor is invalid (prost-reflect failed while checking it); \
             check it with protoc"
        ))
    })
}
