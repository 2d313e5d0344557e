//! MCP tasks for a `tonic-mcp` server: task-augmented tool calls (call now, fetch the result
//! later, cancel) in both task shapes, the final tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) and protocol revision 2025-11-25's (SEP-1686); bounded ([`TaskLimits`]), shared by
//! replicas on a [`TaskStore`], and, for tools that wait on a long-running operation, answered
//! from the backend under a signed id ([`Tasks::key`]).
//!
//! It wraps the runtime crate `tonic-mcp` through its one seam for tasks,
//! [`tonic_mcp::TaskRouter`]: install [`Tasks`] with
//! [`McpServerBuilder::task_router`](tonic_mcp::McpServerBuilder::task_router). A server
//! without it runs no tasks.
//!
//! ```
//! use tonic_mcp::McpServer;
//! use tonic_mcp_tasks::{MemoryTaskStore, Tasks};
//!
//! let server = McpServer::builder("items", "1.0.0")
//!     .replica("replica-a")
//!     .task_router(Tasks::new().store(MemoryTaskStore::new()))
//!     .build();
//! # let _ = server;
//! ```

mod operation;
mod router;
mod sep1686;
mod shared;
mod task_limits;
mod task_store;
mod tasks;

pub use router::Tasks;
pub use shared::DEFAULT_TASK_LEASE;
pub use task_limits::TaskLimits;
pub use task_store::{
    MemoryTaskStore, SharedTask, StoreFuture, TaskPage, TaskStore, TaskStoreError,
};
pub use tasks::DEFAULT_TASK_TTL;
