//! The gateway itself: every backend loaded (reflection, or its descriptor-set file), made into
//! tool sets and served by one MCP server, and loaded again on reload.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tonic::transport::Channel;
use tonic_mcp::McpServer;

use crate::args::Config;
use crate::assemble::Loaded;
use crate::backend::Backend;
use crate::descriptors::Descriptors;
use crate::error::Error;

/// A gateway ready to serve: the MCP server over every selected service of every backend.
#[derive(Debug)]
pub struct Gateway {
    /// The MCP server; serve it with [`McpServer::serve_stdio`] or
    /// [`HttpServer::serve`](tonic_mcp_serve::HttpServer::serve), with the configuration's
    /// connection limits.
    pub server: McpServer,
    /// The services that became tools, by full name.
    pub services: Vec<String>,
    /// The metrics, when the gateway has them (`--metrics`, `--metrics-addr`): serve them on
    /// a port of their own with [`Metrics::serve`](tonic_mcp_metrics::Metrics::serve).
    pub metrics: Option<tonic_mcp_metrics::Metrics>,
    /// The task store the replicas share, as logs name it (no credentials), with
    /// `--task-store`.
    pub task_store: Option<String>,
    /// The tool sets of each backend, by name, as served now ([`Gateway::reload`]).
    served: Mutex<BTreeMap<String, crate::assemble::Served>>,
    /// `mcp_backend_up`, when the gateway has metrics.
    backend_up: Option<prometheus::IntGaugeVec>,
    /// `mcp_gateway_reloads_total`, when the gateway has metrics.
    reloads: Option<prometheus::IntCounterVec>,
}

impl Gateway {
    /// Connects to every backend, loads its descriptors (reflection, or its descriptor-set
    /// file) and builds the MCP server.
    ///
    /// With several backends, one whose reflection cannot be read at start is left out, with
    /// an error in the log naming it and the cause, and the others are served.
    ///
    /// # Errors
    ///
    /// The only backend (or every backend) cannot be reached or reflected, descriptors do not
    /// link, a named service does not exist, an option is invalid for a proto element, or two
    /// tools share a name.
    pub async fn connect(config: &Config) -> Result<Gateway, Error> {
        let mut loaded = Vec::with_capacity(config.backends.len());
        let mut down = Vec::new();
        for backend in &config.backends {
            match load(backend).await {
                Ok(one) => loaded.push(one),
                Err(error) if config.backends.len() > 1 && backend.descriptor_set.is_none() => {
                    tracing::error!(
                        backend = %backend.name,
                        target_url = %backend.target.url,
                        "this backend is not served until it answers: {error}"
                    );
                    down.push(backend);
                }
                Err(error) => return Err(error),
            }
        }
        if loaded.is_empty() {
            return Err(Error::new(
                "no backend could be loaded; the log names each one and why",
            ));
        }
        let gateway = Gateway::from_loaded(config, loaded)?;
        for backend in down {
            gateway.set_up(backend, false);
        }
        Ok(gateway)
    }

    /// `mcp_backend_up` of `backend`, when the gateway has metrics.
    fn set_up(&self, backend: &Backend, up: bool) {
        if let Some(family) = &self.backend_up {
            family
                .with_label_values(&[&backend.name, &backend.target.url])
                .set(i64::from(up));
        }
    }

    /// Builds the MCP server over `descriptors` for the first backend of `config`, calling it
    /// through `channel`.
    ///
    /// # Errors
    ///
    /// As for [`connect`](Self::connect), without the network part.
    pub fn new(
        config: &Config,
        descriptors: Descriptors,
        channel: Channel,
    ) -> Result<Gateway, Error> {
        let backend = config
            .backends
            .first()
            .ok_or_else(|| Error::new("no backend is configured"))?;
        Gateway::from_loaded(
            config,
            vec![Loaded {
                backend,
                descriptors,
                channel,
            }],
        )
    }

    /// Builds the MCP server over backends whose descriptors are loaded.
    ///
    /// # Errors
    ///
    /// A named service does not exist, an option is invalid for a proto element, two tools
    /// share a name (the message names both backends), or no tool is left.
    pub fn from_loaded(config: &Config, loaded: Vec<Loaded<'_>>) -> Result<Gateway, Error> {
        let metrics = (config.metrics || config.metrics_addr.is_some())
            .then(crate::metrics::Metrics::new)
            .transpose()
            .map_err(|e| Error::new(format!("metrics: {e}")))?;
        let backend_up = metrics
            .as_ref()
            .map(crate::metrics::backend_up)
            .transpose()?;
        let reloads = metrics.as_ref().map(crate::metrics::reloads).transpose()?;
        let mut served = BTreeMap::new();
        for one in loaded {
            let name = one.backend.name.clone();
            served.insert(
                name,
                crate::assemble::backend_sets(config, one, backend_up.as_ref())?,
            );
        }
        crate::assemble::check_collisions(config, &served)?;
        let mut builder = McpServer::builder(config.name.clone(), env!("CARGO_PKG_VERSION"))
            .tools_change(config.reload_interval.is_some());
        if let Some(replica) = &config.replica {
            builder = builder.replica(replica);
        }
        for (name, one) in &served {
            let backend = config.backend(name)?;
            for set in &one.sets {
                builder = builder.tool_set(set.clone()).map_err(|e| match e {
                    tonic_mcp::Error::DuplicateTool { .. } => backend.locate(format!(
                        "{e}; give tools distinct names with --prefix, --tool-names package or \
                         --exclude"
                    )),
                    other => backend.locate(other),
                })?;
            }
        }
        if let Some(search) = &config.tool_search {
            let mut search = search.clone();
            if let Some(embeddings) = &config.search_embeddings {
                search = search.embeddings(embeddings.embeddings(metrics.as_ref())?);
            }
            builder = builder.tool_search(search);
        }
        let mut tasks = tonic_mcp_tasks::Tasks::new()
            .limits(config.task_limits)
            .mode(config.task_mode);
        let mut task_store = None;
        if let Some(settings) = &config.task_store {
            let store = settings.store(metrics.as_ref())?;
            task_store = Some(tonic_mcp_tasks::TaskStore::name(&store).to_owned());
            tasks = tasks.store(store);
        }
        if let Some(path) = &config.task_key_file {
            tasks = tasks.key(crate::task_store::read_task_key(path)?);
        }
        builder = builder.task_router(tasks);
        if let Some(metrics) = &metrics {
            builder = metrics.install(builder, config.metrics);
        }
        // W3C trace context in from MCP requests and out to the backends, when spans are
        // exported.
        if config.otlp_endpoint.is_some() {
            builder = builder.observe(tonic_mcp_otel::TraceContext);
        }
        let server = builder.build();
        if server.served_tool_names().is_empty() {
            return Err(Error::new(
                "no tools: every RPC of the selected services is excluded or skipped",
            ));
        }
        Ok(Gateway {
            server,
            services: served
                .values()
                .flat_map(|one| one.services.clone())
                .collect(),
            served: Mutex::new(served),
            task_store,
            metrics,
            backend_up,
            reloads,
        })
    }

    /// Loads every backend again and serves what it has now: a backend that answers with other
    /// descriptors (or whose descriptor-set file changed) changes its tools, one that was down
    /// at start gets its tools, one that cannot be loaded now keeps the tools it had. Calls in
    /// flight finish on the tools they started with; clients with a session are told when the
    /// listing changed. Returns whether it did.
    ///
    /// # Errors
    ///
    /// The tools of two backends now share a name; the gateway keeps serving what it served.
    pub async fn reload(&self, config: &Config) -> Result<bool, Error> {
        // What is served as the reload starts: the tools each backend keeps if it is unchanged
        // or cannot be loaded now.
        let served = self.served_now();
        let mut reloaded = BTreeMap::new();
        // Whether a backend's tools were made anew (its descriptors changed, or it answered
        // for the first time).
        let mut anew = false;
        for backend in &config.backends {
            // The same descriptors again: the tools made of them stay, so that the reload
            // neither decodes them nor makes or compares the tools again.
            let kept = served.get(&backend.name).cloned();
            let one = match load_unless(backend, kept.as_ref().map(|k| k.fingerprint)).await {
                Ok(Some(one)) => {
                    let made = crate::assemble::backend_sets(config, one, self.backend_up.as_ref());
                    anew |= made.is_ok();
                    made
                }
                Ok(None) => match kept {
                    Some(kept) => {
                        if backend.descriptor_set.is_none() {
                            // Its reflection answered.
                            kept.transport.answered();
                        }
                        Ok(kept)
                    }
                    None => Err(backend.locate(Error::new(
                        "its descriptors were found unchanged without tools made of them; \
                         this is a bug",
                    ))),
                },
                Err(error) => Err(error),
            };
            match one {
                Ok(one) => {
                    reloaded.insert(backend.name.clone(), one);
                }
                Err(error) => {
                    self.set_up(backend, false);
                    let kept = served.get(&backend.name).cloned();
                    tracing::warn!(
                        backend = %backend.name,
                        kept_tools = kept.as_ref().map_or(0, |k| k.sets.iter().map(|s| s.len()).sum::<usize>()),
                        "reloading this backend failed; it keeps the tools it had: {error}"
                    );
                    if let Some(kept) = kept {
                        reloaded.insert(backend.name.clone(), kept);
                    }
                }
            }
        }
        // Every backend kept its tools, and the same backends serve: nothing to replace.
        if !anew && reloaded.keys().eq(served.keys()) {
            self.count_reload("unchanged");
            return Ok(false);
        }
        if let Err(error) = crate::assemble::check_collisions(config, &reloaded) {
            self.count_reload("collision");
            return Err(error);
        }
        let sets: Vec<_> = reloaded
            .values()
            .flat_map(|one| one.sets.iter().cloned())
            .collect();
        let changed = self.server.replace_tools(sets).await?;
        *self.served.lock().unwrap_or_else(|e| e.into_inner()) = reloaded;
        self.count_reload(if changed { "changed" } else { "unchanged" });
        Ok(changed)
    }

    fn count_reload(&self, outcome: &str) {
        if let Some(reloads) = &self.reloads {
            reloads.with_label_values(&[outcome]).inc();
        }
    }

    fn served_now(&self) -> BTreeMap<String, crate::assemble::Served> {
        self.served
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The descriptors of `backend` (its file, or reflection) and the channel to it.
pub(crate) async fn load(backend: &Backend) -> Result<Loaded<'_>, Error> {
    load_unless(backend, None).await?.ok_or_else(|| {
        backend.locate(Error::new(
            "its descriptors were found unchanged without a fingerprint to compare; this is a bug",
        ))
    })
}

/// [`load`], or `None` without decoding anything when the backend's descriptors are those of
/// fingerprint `known` (see [`Descriptors::fingerprint`]).
async fn load_unless(backend: &Backend, known: Option<u64>) -> Result<Option<Loaded<'_>>, Error> {
    let channel = crate::target::channel(&backend.target).map_err(|e| backend.locate(e))?;
    let descriptors = match &backend.descriptor_set {
        Some(path) => Descriptors::from_file_unless(path, known),
        None => {
            crate::descriptors::from_reflection_unless(
                channel.clone(),
                &backend.headers,
                backend.target.timeout,
                &backend.services,
                known,
            )
            .await
        }
    }
    .map_err(|e| backend.locate(e))?;
    Ok(descriptors.map(|descriptors| Loaded {
        backend,
        descriptors,
        channel,
    }))
}
