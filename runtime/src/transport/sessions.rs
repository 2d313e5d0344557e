//! Streamable HTTP sessions: rmcp's in-memory session manager with bounds.

use std::{
    collections::{HashMap, HashSet},
    io::Error,
    sync::{Arc, Mutex},
};

use crate::{server::SessionLimits, sync::lock, tool::context::Caller};
use rmcp::transport::{
    WorkerTransport,
    common::server_side_http,
    streamable_http_server::{
        RestoreOutcome, SessionId, SessionManager,
        session::{
            ServerSseMessage,
            local::{LocalSessionManager, create_local_session},
        },
    },
};

/// rmcp's in-memory session manager with a bound on open sessions.
pub(crate) struct SessionStore {
    pub(crate) local: LocalSessionManager,
    pub(crate) max_sessions: usize,
    max_sessions_per_principal: usize,
    /// This replica's name ([`McpServerBuilder::replica`](crate::server::McpServerBuilder::replica)),
    /// which starts the id of every session opened here.
    replica: Option<Arc<str>>,
    /// Who opened each session, when an authenticating layer named the caller: the session
    /// answers only to it.
    owners: Mutex<HashMap<String, Caller>>,
    /// Serialises creation, so that concurrent `initialize` requests cannot overshoot.
    creating: tokio::sync::Mutex<()>,
    /// Held by the HTTP service from its check of the bounds until rmcp has opened the
    /// session, so that concurrent `initialize` requests at the bound get its 503, not the
    /// 500 rmcp answers when `creating` refuses.
    pub(crate) admitting: tokio::sync::Mutex<()>,
    /// The requests in flight in each session, by session and JSON-RPC id: a second request
    /// with an id already in flight is refused before it runs (rmcp would run both and answer
    /// one).
    in_flight: Mutex<HashSet<(String, String)>>,
}

/// Session owners remembered before those of closed sessions are forgotten.
const OWNERS_PRUNE_AT: usize = 4096;

impl SessionStore {
    /// The store over `local`, bounded by `limits`; the ids of its sessions start with
    /// `replica` and a dot when it is named.
    pub(crate) fn new(
        local: LocalSessionManager,
        limits: SessionLimits,
        replica: Option<&str>,
    ) -> Self {
        Self {
            local,
            replica: replica.map(Arc::from),
            max_sessions: limits.max_sessions,
            max_sessions_per_principal: limits.max_sessions_per_principal,
            creating: tokio::sync::Mutex::new(()),
            admitting: tokio::sync::Mutex::new(()),
            in_flight: Mutex::new(HashSet::new()),
            owners: Mutex::new(HashMap::new()),
        }
    }

    fn full_message(&self) -> String {
        format!(
            "too many open sessions (the limit is {}); close unused sessions with DELETE or retry later",
            self.max_sessions
        )
    }

    /// Why one more session cannot be opened now, for `caller` when the request has one.
    pub(crate) async fn refusal(&self, caller: Option<&Caller>) -> Option<String> {
        let live = self.local.sessions.read().await;
        if live.len() >= self.max_sessions {
            return Some(self.full_message());
        }
        let caller = caller?;
        let open = lock(&self.owners)
            .iter()
            .filter(|(session, opener)| *opener == caller && live.contains_key(session.as_str()))
            .count();
        (open >= self.max_sessions_per_principal).then(|| {
            format!(
                "this caller has too many open sessions (the limit per token owner is {}); close \
                 unused sessions with DELETE or retry later",
                self.max_sessions_per_principal
            )
        })
    }

    /// Whether `caller` may use `session`: a request with a caller names only a session that
    /// caller opened. Every session is opened with a caller when an authenticating layer is in
    /// front, so one without an owner is unknown to it.
    pub(crate) fn owned_by(&self, session: &str, caller: &Caller) -> bool {
        lock(&self.owners).get(session) == Some(caller)
    }

    /// Remembers that `caller` opened `session`.
    pub(crate) async fn record_owner(&self, session: &str, caller: Caller) {
        let live = self.local.sessions.read().await;
        let mut owners = lock(&self.owners);
        if owners.len() >= OWNERS_PRUNE_AT {
            // Sessions end without telling this map (idle timeout, DELETE).
            owners.retain(|session, _| live.contains_key(session.as_str()));
        }
        owners.insert(session.to_owned(), caller);
    }

    /// Marks request `id` of `session` in flight, or `None` when a request with that id is
    /// in flight there already.
    pub(crate) fn start_request(self: &Arc<Self>, session: &str, id: String) -> Option<InFlight> {
        let key = (session.to_owned(), id);
        lock(&self.in_flight).insert(key.clone()).then(|| InFlight {
            store: Arc::clone(self),
            key,
        })
    }
}

impl crate::server::OpenSessions for SessionStore {
    /// Sessions open now; 0 while the map is being written (a scrape does not wait).
    fn open(&self) -> usize {
        self.local
            .sessions
            .try_read()
            .map_or(0, |sessions| sessions.len())
    }
}

/// A request in flight in a session, until dropped (with the answer's body).
pub(crate) struct InFlight {
    store: Arc<SessionStore>,
    key: (String, String),
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.store.in_flight).remove(&self.key);
    }
}

/// Errors are worded as the local manager's (rmcp reads only their text).
impl SessionManager for SessionStore {
    type Error = std::io::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The service checks the bound first and answers 503; this closes the race between
        // two `initialize` requests at the bound (rmcp answers that one with a 500 naming it).
        let _creating = self.creating.lock().await;
        if self.local.sessions.read().await.len() >= self.max_sessions {
            return Err(Error::other(self.full_message()));
        }
        let Some(replica) = &self.replica else {
            return self.local.create_session().await.map_err(Error::other);
        };
        // rmcp's `LocalSessionManager::create_session` with the replica's name in front of its
        // random UUID (that manager has no event store here, so nothing else differs).
        let id: SessionId = format!("{replica}.{}", server_side_http::session_id()).into();
        let (handle, worker) = create_local_session(id.clone(), self.local.session_config.clone());
        self.local.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: rmcp::model::ClientJsonRpcMessage,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, Self::Error> {
        self.local
            .initialize_session(id, message)
            .await
            .map_err(Error::other)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await.map_err(Error::other)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await.map_err(Error::other)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: rmcp::model::ClientJsonRpcMessage,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.local
            .create_stream(id, message)
            .await
            .map_err(Error::other)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: rmcp::model::ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local
            .accept_message(id, message)
            .await
            .map_err(Error::other)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.local
            .create_standalone_stream(id)
            .await
            .map_err(Error::other)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.local
            .resume(id, last_event_id)
            .await
            .map_err(Error::other)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await.map_err(Error::other)
    }
}
