//! Progress of a running call: notifications to the client, or the status message of its task.

use rmcp::{
    RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
    service::Peer,
    task_manager::TaskContext,
};

/// Where progress goes: notifications to a client that passed a `progressToken`, or the status
/// message of the task the call runs in.
pub(crate) enum Progress {
    /// `notifications/progress` with the client's token.
    Notify {
        peer: Peer<RoleServer>,
        token: ProgressToken,
    },
    /// The task's status message, read by `tasks/get`.
    Task(TaskContext),
}

impl Progress {
    /// Report progress `count` with `message`. Delivery failures are ignored: a client that
    /// cannot take the notification still gets the result.
    pub(crate) async fn report(&self, count: usize, message: String) {
        match self {
            Self::Notify { peer, token } => {
                let param = ProgressNotificationParam::new(token.clone(), count as f64)
                    .with_message(message);
                let _ = peer.notify_progress(param).await;
            }
            Self::Task(task) => task.set_status_message(message),
        }
    }
}
