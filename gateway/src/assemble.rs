//! From loaded backends to tool sets: each backend's services become tool sets with its
//! settings, and no two backends may make a tool of the same name.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use tonic_mcp::ToolSet;
use tonic_mcp_dynamic::DescriptorTools;

use crate::args::Config;
use crate::backend::Backend;
use crate::backend_state;
use crate::descriptors::Descriptors;
use crate::error::Error;

/// A backend whose descriptors are loaded, ready to become tools.
#[derive(Debug)]
pub struct Loaded<'a> {
    /// The backend.
    pub backend: &'a Backend,
    /// Its descriptors.
    pub descriptors: Descriptors,
    /// The channel its calls go through.
    pub channel: tonic::transport::Channel,
}

/// What one backend serves.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    /// One tool set per service with tools.
    pub(crate) sets: Vec<ToolSet>,
    /// The services that became tools, by full name.
    pub(crate) services: Vec<String>,
    /// The [`fingerprint`](crate::descriptors::Descriptors::fingerprint) of the descriptors they were
    /// made of.
    pub(crate) fingerprint: u64,
    /// The transport their calls go through, which reports the target's state.
    pub(crate) transport: backend_state::Watched<tonic::transport::Channel>,
}

/// The tool sets of one loaded backend, each with the backend's call settings and the
/// server's forwarding hooks, calling it through one watched transport.
pub(crate) fn backend_sets(
    config: &Config,
    loaded: Loaded<'_>,
    backend_up: Option<&prometheus::IntGaugeVec>,
) -> Result<Served, Error> {
    let Loaded {
        backend,
        descriptors,
        channel,
    } = loaded;
    let services = descriptors
        .select(&backend.services)
        .map_err(|e| backend.locate(e))?;
    // Two versions of one API in one descriptor set are the normal case: their tools are
    // qualified by package instead of refused as duplicates. Schemas are made when first
    // needed, so that thousands of tools are served at once (`check` makes them all).
    let tools = DescriptorTools::of_set(
        &descriptors.set,
        Arc::clone(&descriptors.comments),
        &backend.options,
    )
    .unique_names(services.iter().map(String::as_str))
    .lazy_schemas();
    // One watcher for every service: the target's state changes are logged once.
    let up = backend_up.map(|family| backend_state::Up {
        family: family.clone(),
        labels: [backend.name.clone(), backend.target.url.clone()],
    });
    let transport = backend_state::Watched::new(channel, backend.target.url.clone(), up);
    if backend.descriptor_set.is_none() {
        // Its reflection answered.
        transport.answered();
    }
    let mut served = Served {
        sets: Vec::new(),
        services: Vec::new(),
        fingerprint: descriptors.fingerprint,
        transport: transport.clone(),
    };
    // Made on several threads for many services; the first error is the first in order.
    let sets = tools
        .service_sets(services.iter().map(String::as_str), transport)
        .map_err(|e| backend.locate(e))?;
    for (service, set) in services.iter().zip(sets) {
        if set.is_empty() {
            tracing::warn!(backend = %backend.name, service = %service, "no RPC of this service is selected; it has no tools");
            continue;
        }
        let mut set = backend.configure(set);
        if !config.forward_headers.is_empty() {
            set = set.on_call(tonic_mcp::forward_headers(config.forward_headers.clone()));
        }
        if let Some(auth) = config
            .auth
            .as_ref()
            .filter(|a| !a.forward_claims.is_empty())
        {
            set = set.on_call(tonic_mcp_auth::forward_claims(auth.forward_claims.clone()));
        }
        tracing::debug!(backend = %backend.name, service = %service, tools = set.len(), "service ready");
        served.sets.push(set);
        served.services.push(service.clone());
    }
    Ok(served)
}

/// An error naming both backends when two make a tool of the same name. (Two tools of one
/// backend with one name are refused when the server is built, naming both RPCs.)
pub(crate) fn check_collisions(
    config: &Config,
    served: &BTreeMap<String, Served>,
) -> Result<(), Error> {
    let mut owners: HashMap<&str, &str> = HashMap::new();
    // In the order of the file, so that the later backend is the one named at fault.
    for backend in &config.backends {
        let Some(one) = served.get(&backend.name) else {
            continue;
        };
        for set in &one.sets {
            if let Some((tool, first)) = set.names().find_map(|name| {
                owners
                    .get(name)
                    .filter(|first| **first != backend.name)
                    .map(|first| (name, *first))
            }) {
                return Err(backend.locate(format!(
                    "tool `{tool}` has the name of a tool of backend `{first}`; give one of the \
                     two backends a `prefix`, or `exclude` the RPC"
                )));
            }
        }
        for set in &one.sets {
            owners.extend(set.names().map(|name| (name, backend.name.as_str())));
        }
    }
    Ok(())
}
