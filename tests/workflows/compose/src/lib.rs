// scripts/workflows.sh builds this crate (a copy of it) in target/workflows/compose/: prost-build's files (named after the Rust module path),
// nested by module; each includes its tonic code and MCP module.
#![allow(clippy::all, dead_code, missing_docs, non_camel_case_types, unused)]

macro_rules! custom {
    ($file:literal) => {
        include!(concat!(env!("OUT_DIR"), "/custom/", $file));
    };
}

pub mod common {
    pub mod match_v2 {
        include!(concat!(env!("OUT_DIR"), "/common/r#match.v2.rs"));
    }
}
custom!("_.rs");
pub mod camel_case {
    pub mod v2_api {
        custom!("camel_case.v2_api.rs");
    }
}
pub mod crate_ {
    pub mod r#gen {
        custom!("crate_.r#gen.rs");
    }
}
pub mod digits {
    pub mod _2fa {
        pub mod v10 {
            custom!("digits._2fa.v10.rs");
        }
    }
}
pub mod edge {
    pub mod r#type {
        pub mod foo_bar {
            custom!("edge.r#type.foo_bar.rs");
        }
    }
}
pub mod r#match {
    pub mod v2 {
        custom!("r#match.v2.rs");
    }
}
pub mod demo {
    pub mod v1 {
        custom!("demo.v1.rs");
    }
}
pub mod google {
    pub mod api {
        custom!("google.api.rs");
    }
    // The demo's ArchiveTasks returns a google.longrunning.Operation.
    pub mod longrunning {
        custom!("google.longrunning.rs");
    }
    pub mod rpc {
        custom!("google.rpc.rs");
    }
}
