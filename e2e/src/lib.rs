//! The `testdata/` protos compiled by prost and tonic, with the checked-in golden MCP modules
//! included beside them, plus echo implementations of the services the end-to-end tests serve.

#![allow(
    missing_docs,
    clippy::all,
    unreachable_pub,
    missing_debug_implementations
)]

include!(concat!(env!("OUT_DIR"), "/testdata_tree.rs"));

pub mod services;
