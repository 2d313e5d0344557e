//! The Rust names of services and methods as prost-build resolves them, collected by running
//! prost-build itself over the service files.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use prost_types::FileDescriptorProto;

use super::Inputs;
use crate::options::PluginOptions;
use tonic_mcp_schema::error::{Error, Result};

/// What prost-build resolved for one service.
#[derive(Debug, Clone)]
pub(super) struct ProstService {
    pub(super) rust_name: String,
    /// prost's Rust method name (`get_item`, `r#type`) by proto method name.
    pub(super) methods: BTreeMap<String, String>,
}

/// Runs prost-build over the files to generate and collects the services it resolves.
pub(super) fn prost_services(
    inputs: &Inputs,
    options: &PluginOptions,
) -> Result<BTreeMap<String, ProstService>> {
    #[derive(Default)]
    struct Collect(Rc<RefCell<Vec<prost_build::Service>>>);
    impl prost_build::ServiceGenerator for Collect {
        fn generate(&mut self, service: prost_build::Service, buf: &mut String) {
            // prost-build drops a module whose code is empty and then expects it to exist.
            buf.push_str("// collected\n");
            self.0.borrow_mut().push(service);
        }
    }

    // Only the services matter here, and prost resolves a method's types from their names
    // alone. Giving it the service files without their messages keeps it from generating (and
    // us from holding) the code of every message, which prost-build would also need every
    // imported file for.
    let requests: Vec<(prost_build::Module, FileDescriptorProto)> = inputs
        .files()
        .filter(|f| !f.service.is_empty() && inputs.files_to_generate.iter().any(|g| g == f.name()))
        .map(|f| {
            let services_only = FileDescriptorProto {
                name: f.name.clone(),
                package: f.package.clone(),
                dependency: f.dependency.clone(),
                service: f.service.clone(),
                options: f.options.clone(),
                syntax: f.syntax.clone(),
                ..FileDescriptorProto::default()
            };
            (
                prost_build::Module::from_protobuf_package_name(f.package()),
                services_only,
            )
        })
        .collect();
    let collected = Rc::new(RefCell::new(Vec::new()));
    let mut config = prost_build::Config::new();
    config.service_generator(Box::new(Collect(collected.clone())));
    config.format(false);
    for (proto, rust) in &options.extern_paths {
        config.extern_path(proto, rust);
    }
    // prost-build is a library for build scripts and may panic on input it does not expect; a
    // plugin must report that instead.
    let outcome = catch_unwind(AssertUnwindSafe(|| config.generate(requests)));
    match outcome {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return Err(Error::Unsupported {
                element: "prost-build".to_owned(),
                reason: e.to_string(),
            });
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown panic".to_owned());
            return Err(Error::Unsupported {
                element: "prost-build".to_owned(),
                reason: format!("prost-build failed on this input: {message}"),
            });
        }
    }
    let services = collected.borrow();
    Ok(services
        .iter()
        .map(|s| {
            let full_name = if s.package.is_empty() {
                s.proto_name.clone()
            } else {
                format!("{}.{}", s.package, s.proto_name)
            };
            let methods = s
                .methods
                .iter()
                .map(|m| (m.proto_name.clone(), m.name.clone()))
                .collect();
            (
                full_name,
                ProstService {
                    rust_name: s.name.clone(),
                    methods,
                },
            )
        })
        .collect())
}
