//! Progress of a running call: notifications to the client, or the status message of its task.

use std::sync::{Arc, Mutex};

use rmcp::{
    RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
    service::{Peer, RequestContext},
    task_manager::TaskContext,
};

use crate::sync::lock;

/// Where progress goes: notifications to a client that passed a `progressToken`, or the status
/// message of the task the call runs in.
#[derive(Clone)]
pub(crate) enum Progress {
    /// `notifications/progress` with the client's token.
    Notify {
        peer: Peer<RoleServer>,
        token: ProgressToken,
    },
    /// The task's status message, read by `tasks/get`.
    Task(TaskContext),
    /// A call answered inline that may become a task on the way
    /// ([`TaskMode::Auto`](crate::TaskMode::Auto)): first as the request asked (or nowhere),
    /// then, once [`Handoff::to_task`], the task's status message.
    Handoff(Arc<Handoff>),
}

impl Progress {
    /// Notifications with the request's progress token, when it gave one.
    pub(crate) fn of_request(context: &RequestContext<RoleServer>) -> Option<Progress> {
        let token = context.meta.get_progress_token()?;
        Some(Progress::Notify {
            peer: context.peer.clone(),
            token,
        })
    }

    /// Report progress `count` with `message`. Delivery failures are ignored: a client that
    /// cannot take the notification still gets the result.
    pub(crate) async fn report(&self, count: usize, message: String) {
        match self {
            Self::Notify { peer, token } => notify(peer, token, count, message).await,
            Self::Task(task) => task.set_status_message(message),
            Self::Handoff(handoff) => {
                let task = {
                    let mut state = lock(&handoff.state);
                    if state.task.is_none() {
                        state.last = Some(message.clone());
                    }
                    state.task.clone()
                };
                match (task, &handoff.before) {
                    (Some(task), _) => task.set_status_message(message),
                    (None, Some((peer, token))) => notify(peer, token, count, message).await,
                    (None, None) => {}
                }
            }
        }
    }
}

/// Progress of a call that may become a task: the request's own until it does, the task's
/// after.
pub(crate) struct Handoff {
    /// Where progress goes while the call is answered inline: the request's progress token,
    /// when it gave one.
    before: Option<(Peer<RoleServer>, ProgressToken)>,
    state: Mutex<HandoffState>,
}

#[derive(Default)]
struct HandoffState {
    /// The task the call became.
    task: Option<TaskContext>,
    /// The last progress message before that, which becomes the task's first status.
    last: Option<String>,
}

impl Handoff {
    /// Progress going to `before` (notifications with the request's progress token) until the
    /// call becomes a task.
    pub(crate) fn new(before: Option<(Peer<RoleServer>, ProgressToken)>) -> Arc<Self> {
        Arc::new(Self {
            before,
            state: Mutex::new(HandoffState::default()),
        })
    }

    /// The call became `task`: progress goes to its status message from now on (the request
    /// was answered, so its progress token is done), starting with the last message reported
    /// before.
    pub(crate) fn to_task(&self, task: TaskContext) {
        let mut state = lock(&self.state);
        if let Some(last) = state.last.take() {
            task.set_status_message(last);
        }
        state.task = Some(task);
    }
}

/// `notifications/progress` `count` with `message` for `token`, if the client takes it.
async fn notify(peer: &Peer<RoleServer>, token: &ProgressToken, count: usize, message: String) {
    let param = ProgressNotificationParam::new(token.clone(), count as f64).with_message(message);
    let _ = peer.notify_progress(param).await;
}
