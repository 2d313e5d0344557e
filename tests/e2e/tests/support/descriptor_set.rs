//! The descriptor set the ignored differential runs read (`transcode_request`,
//! `transcode_response`, `transcode_arguments`).

use prost_reflect::DescriptorPool;

/// The pool of the binary `FileDescriptorSet` at `TRANSCODE_DESCRIPTORS` (e.g. every googleapis
/// service file); panics, naming what is missing, when it cannot be read or decoded.
pub(crate) fn from_env() -> DescriptorPool {
    let path = std::env::var("TRANSCODE_DESCRIPTORS").expect("TRANSCODE_DESCRIPTORS");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    DescriptorPool::decode(bytes.as_slice()).unwrap_or_else(|e| panic!("{path}: {e}"))
}
