//! Long-running operations: the table behind `ArchiveTasks` and the tonic `Operations` service
//! (`google.longrunning`) that reads, waits for, cancels and deletes them.
//!
//! Operations live in memory, named `operations/archive-N`. The work itself runs in a tokio task
//! that reports progress with [`OperationStore::progress`] and ends with
//! [`OperationStore::finish`]; it checks [`OperationStore::cancel_requested`] between steps.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use prost::Message as _;
use tokio::sync::{Mutex, Notify};
use tonic::{Code, Request, Response, Status};

use crate::pb::google::longrunning::{
    CancelOperationRequest, DeleteOperationRequest, GetOperationRequest, ListOperationsRequest,
    ListOperationsResponse, Operation, WaitOperationRequest, operation, operations_server,
};
use crate::pb::google::rpc;

/// How long `WaitOperation` waits when the request sets no timeout.
const DEFAULT_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct Table {
    operations: BTreeMap<String, Entry>,
    next: u64,
}

#[derive(Debug)]
struct Entry {
    operation: Operation,
    cancel_requested: bool,
}

/// The operations of one server (shared by every clone).
#[derive(Debug, Clone, Default)]
pub(crate) struct OperationStore {
    table: Arc<Mutex<Table>>,
    /// Woken whenever an operation finishes, for `WaitOperation`.
    finished: Arc<Notify>,
}

/// `google.protobuf.Any` holding `message`, a `full_name`.
pub(crate) fn pack(full_name: &str, message: &impl prost::Message) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{full_name}"),
        value: message.encode_to_vec(),
    }
}

fn not_found(name: &str) -> Status {
    Status::not_found(format!("no operation is named `{name}`"))
}

impl OperationStore {
    /// A new running operation with `metadata`.
    pub(crate) async fn start(&self, metadata: prost_types::Any) -> Operation {
        let mut table = self.table.lock().await;
        table.next += 1;
        let operation = Operation {
            name: format!("operations/archive-{}", table.next),
            metadata: Some(metadata),
            done: false,
            result: None,
        };
        table.operations.insert(
            operation.name.clone(),
            Entry {
                operation: operation.clone(),
                cancel_requested: false,
            },
        );
        operation
    }

    /// Replaces the metadata of a running operation.
    pub(crate) async fn progress(&self, name: &str, metadata: prost_types::Any) {
        if let Some(entry) = self.table.lock().await.operations.get_mut(name) {
            entry.operation.metadata = Some(metadata);
        }
    }

    /// Whether `CancelOperation` asked the operation to stop.
    pub(crate) async fn cancel_requested(&self, name: &str) -> bool {
        self.table
            .lock()
            .await
            .operations
            .get(name)
            .is_some_and(|entry| entry.cancel_requested)
    }

    /// Ends an operation with its response or its error.
    pub(crate) async fn finish(&self, name: &str, result: Result<prost_types::Any, Status>) {
        if let Some(entry) = self.table.lock().await.operations.get_mut(name) {
            entry.operation.done = true;
            entry.operation.result = Some(match result {
                Ok(response) => operation::Result::Response(response),
                // A status made with error details carries them as an encoded
                // `google.rpc.Status`.
                Err(status) => operation::Result::Error(
                    rpc::Status::decode(status.details())
                        .ok()
                        .filter(|decoded| decoded.code == status.code() as i32)
                        .unwrap_or_else(|| rpc::Status {
                            code: status.code() as i32,
                            message: status.message().to_owned(),
                            details: Vec::new(),
                        }),
                ),
            });
        }
        self.finished.notify_waiters();
    }

    async fn get(&self, name: &str) -> Result<Operation, Status> {
        self.table
            .lock()
            .await
            .operations
            .get(name)
            .map(|entry| entry.operation.clone())
            .ok_or_else(|| not_found(name))
    }
}

#[tonic::async_trait]
impl operations_server::Operations for OperationStore {
    async fn list_operations(
        &self,
        _request: Request<ListOperationsRequest>,
    ) -> Result<Response<ListOperationsResponse>, Status> {
        let table = self.table.lock().await;
        Ok(Response::new(ListOperationsResponse {
            operations: table
                .operations
                .values()
                .map(|entry| entry.operation.clone())
                .collect(),
            next_page_token: String::new(),
        }))
    }

    async fn get_operation(
        &self,
        request: Request<GetOperationRequest>,
    ) -> Result<Response<Operation>, Status> {
        self.get(&request.get_ref().name).await.map(Response::new)
    }

    async fn delete_operation(
        &self,
        request: Request<DeleteOperationRequest>,
    ) -> Result<Response<()>, Status> {
        let name = &request.get_ref().name;
        match self.table.lock().await.operations.remove(name) {
            Some(_) => Ok(Response::new(())),
            None => Err(not_found(name)),
        }
    }

    async fn cancel_operation(
        &self,
        request: Request<CancelOperationRequest>,
    ) -> Result<Response<()>, Status> {
        let name = &request.get_ref().name;
        let mut table = self.table.lock().await;
        let entry = table
            .operations
            .get_mut(name)
            .ok_or_else(|| not_found(name))?;
        if !entry.operation.done {
            entry.cancel_requested = true;
            tracing::info!(operation = %name, "cancellation requested");
        }
        Ok(Response::new(()))
    }

    async fn wait_operation(
        &self,
        request: Request<WaitOperationRequest>,
    ) -> Result<Response<Operation>, Status> {
        let request = request.into_inner();
        let timeout = match request.timeout {
            None => DEFAULT_WAIT,
            Some(timeout) => Duration::try_from(timeout)
                .map_err(|_| Status::new(Code::InvalidArgument, "timeout must not be negative"))?,
        };
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let finished = self.finished.notified();
            let operation = self.get(&request.name).await?;
            if operation.done {
                return Ok(Response::new(operation));
            }
            if tokio::time::timeout_at(deadline, finished).await.is_err() {
                return Ok(Response::new(operation));
            }
        }
    }
}
