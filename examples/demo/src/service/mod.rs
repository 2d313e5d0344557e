//! The task tracker: an in-memory implementation of the tonic `TaskService` trait.
//!
//! Errors follow Google's error model, so the MCP tools can show the model what went wrong:
//! a missing task or comment is `NOT_FOUND` with `ErrorInfo` and `ResourceInfo` details, and
//! bad field values are `INVALID_ARGUMENT` with a `BadRequest` listing every field violation.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::Mutex;
use tokio_stream::Stream;
use tonic::{Code, Request, Response, Status};
use tonic_types::{ErrorDetails, StatusExt as _};

use crate::operations::{OperationStore, pack};
use crate::pb::demo::v1::{
    AddCommentRequest, ArchiveTasksMetadata, ArchiveTasksRequest, ArchiveTasksResponse, Comment,
    CreateTaskRequest, DeleteTaskRequest, ExportTasksRequest, GetTaskRequest, ListTasksRequest,
    ListTasksResponse, Person, Priority, State, Task, UpdateTaskRequest, task::Owner,
    task_service_server::TaskService,
};
use crate::pb::google::longrunning::Operation;

/// `ErrorInfo.domain` of every error this service returns.
const ERROR_DOMAIN: &str = "tasks.demo.local";
const TASK_ID_PREFIX: &str = "task-";
const COMMENT_ID_PREFIX: &str = "c-";
const MAX_TITLE_CHARS: usize = 200;
const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 100;

/// Field paths `UpdateTask` accepts in its `update_mask`.
const UPDATABLE: &[&str] = &[
    "title",
    "description",
    "state",
    "priority",
    "labels",
    "person",
    "team",
    "due_time",
    "estimate",
    "story_points",
    "parent_id",
    "time_logged",
];

/// Field paths the server sets; a mask naming one is an error.
const OUTPUT_ONLY: &[&str] = &["id", "comments", "create_time", "update_time"];

#[derive(Debug, Default)]
struct Tracker {
    /// Tasks by the number in their id, so listing is ordered by creation.
    tasks: BTreeMap<u64, Task>,
    next_task: u64,
    next_comment: u64,
}

impl Tracker {
    fn task_id(&mut self) -> (u64, String) {
        self.next_task += 1;
        (
            self.next_task,
            format!("{TASK_ID_PREFIX}{}", self.next_task),
        )
    }

    /// Adds `task` under the next id, created and last updated at `at`.
    fn add_sample(&mut self, at: SystemTime, task: Task) {
        let (n, id) = self.task_id();
        let task = Task {
            id,
            create_time: Some(at.into()),
            update_time: Some(at.into()),
            ..task
        };
        self.tasks.insert(n, task);
    }

    fn comment(&mut self, author: &str, text: &str, at: SystemTime) -> Comment {
        self.next_comment += 1;
        Comment {
            id: format!("{COMMENT_ID_PREFIX}{}", self.next_comment),
            author: author.to_owned(),
            text: text.to_owned(),
            create_time: Some(at.into()),
            replies: Vec::new(),
        }
    }

    fn get(&self, id: &str) -> Result<&Task, Status> {
        task_number(id)
            .and_then(|n| self.tasks.get(&n))
            .ok_or_else(|| task_not_found(id))
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Task, Status> {
        task_number(id)
            .and_then(|n| self.tasks.get_mut(&n))
            .ok_or_else(|| task_not_found(id))
    }

    fn exists(&self, id: &str) -> bool {
        task_number(id).is_some_and(|n| self.tasks.contains_key(&n))
    }
}

/// Tasks an export reads from the tracker at a time: all a stream holds.
const EXPORT_BATCH: usize = 16;

/// How long archiving one task takes unless the request says otherwise.
const DEFAULT_PER_TASK: Duration = Duration::from_millis(500);
/// The longest `per_task` accepted.
const MAX_PER_TASK: Duration = Duration::from_secs(60);

/// The shared state behind every clone of the service.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskStore {
    state: Arc<Mutex<Tracker>>,
    operations: OperationStore,
}

impl TaskStore {
    /// A store with a few tasks, so that the tools have something to show right away.
    pub(crate) fn with_sample_data() -> Self {
        let now = SystemTime::now();
        let day = Duration::from_secs(24 * 60 * 60);
        let mut state = Tracker::default();

        let mut question = state.comment("Grace", "Should this cover the MCP tools too?", now);
        question
            .replies
            .push(state.comment("Ada", "Yes, with one example per tool.", now));
        state.add_sample(
            now,
            Task {
                title: "Write the release notes".to_owned(),
                description: "Summarise the changes since the last release.".to_owned(),
                state: State::InProgress.into(),
                priority: Priority::High.into(),
                labels: HashMap::from([("area".to_owned(), "docs".to_owned())]),
                owner: Some(Owner::Person(Person {
                    name: "Ada".to_owned(),
                    email: "ada@example.com".to_owned(),
                })),
                due_time: Some((now + 2 * day).into()),
                estimate: Some(duration(Duration::from_secs(90 * 60))),
                story_points: Some(3),
                comments: vec![question],
                ..Task::default()
            },
        );

        state.add_sample(
            now,
            Task {
                title: "Fix the flaky login test".to_owned(),
                state: State::Todo.into(),
                priority: Priority::Medium.into(),
                labels: HashMap::from([
                    ("area".to_owned(), "backend".to_owned()),
                    ("kind".to_owned(), "bug".to_owned()),
                ]),
                owner: Some(Owner::Team("platform".to_owned())),
                // Zero is an estimate too: the wrapper type keeps it apart from "not estimated".
                story_points: Some(0),
                ..Task::default()
            },
        );

        state.add_sample(
            now,
            Task {
                title: "Add a regression test for the login fix".to_owned(),
                state: State::Done.into(),
                priority: Priority::Low.into(),
                parent_id: Some(format!("{TASK_ID_PREFIX}2")),
                time_logged: HashMap::from([(
                    "Linus".to_owned(),
                    duration(Duration::from_secs(30 * 60)),
                )]),
                ..Task::default()
            },
        );

        Self {
            state: Arc::new(Mutex::new(state)),
            operations: OperationStore::default(),
        }
    }

    /// The long-running operations of `ArchiveTasks`, served by the `Operations` service.
    pub(crate) fn operations(&self) -> OperationStore {
        self.operations.clone()
    }
}

/// Archives `ids`, one every `per_task`, under the operation `name`, until done or cancelled.
async fn archive(store: TaskStore, name: String, state: State, ids: Vec<u64>, per_task: Duration) {
    let total = ids.len() as i32;
    let mut archived: Vec<Task> = Vec::new();
    for n in ids {
        tokio::time::sleep(per_task).await;
        if store.operations.cancel_requested(&name).await {
            // Cancelled work is put back as it was.
            let mut tracker = store.state.lock().await;
            for task in archived {
                if let Some(n) = task_number(&task.id) {
                    tracker.tasks.insert(n, task);
                }
            }
            tracing::info!(operation = %name, "archiving cancelled");
            let status = Status::cancelled("the operation was cancelled by CancelOperation");
            store.operations.finish(&name, Err(status)).await;
            return;
        }
        if let Some(task) = store.state.lock().await.tasks.remove(&n) {
            archived.push(task);
        }
        let metadata = ArchiveTasksMetadata {
            archived: archived.len() as i32,
            total,
        };
        let metadata = pack("demo.v1.ArchiveTasksMetadata", &metadata);
        store.operations.progress(&name, metadata).await;
    }
    tracing::info!(operation = %name, tasks = archived.len(), ?state, "archived tasks");
    let response = ArchiveTasksResponse { tasks: archived };
    let response = pack("demo.v1.ArchiveTasksResponse", &response);
    store.operations.finish(&name, Ok(response)).await;
}

#[tonic::async_trait]
impl TaskService for TaskStore {
    async fn create_task(
        &self,
        request: Request<CreateTaskRequest>,
    ) -> Result<Response<Task>, Status> {
        let Some(mut task) = request.into_inner().task else {
            return Err(invalid_argument(vec![violation("task", "is required")]));
        };
        let mut state = self.state.lock().await;
        let mut violations = Vec::new();
        check_task(&task, &state, "task", &mut violations);
        if task.title.trim().is_empty() {
            violations.push(violation("task.title", "must not be blank"));
        }
        if !violations.is_empty() {
            return Err(invalid_argument(violations));
        }
        let now = SystemTime::now();
        let (n, id) = state.task_id();
        task.id = id;
        if task.state == State::Unspecified as i32 {
            task.state = State::Todo.into();
        }
        task.comments.clear();
        task.create_time = Some(now.into());
        task.update_time = Some(now.into());
        state.tasks.insert(n, task.clone());
        tracing::info!(id = %task.id, title = %task.title, "created task");
        Ok(Response::new(task))
    }

    async fn get_task(&self, request: Request<GetTaskRequest>) -> Result<Response<Task>, Status> {
        let state = self.state.lock().await;
        state.get(&request.get_ref().id).cloned().map(Response::new)
    }

    async fn list_tasks(
        &self,
        request: Request<ListTasksRequest>,
    ) -> Result<Response<ListTasksResponse>, Status> {
        let request = request.into_inner();
        let mut violations = Vec::new();
        let page_size = match usize::try_from(request.page_size) {
            Ok(0) => DEFAULT_PAGE_SIZE,
            Ok(size) => size.min(MAX_PAGE_SIZE),
            Err(_) => {
                violations.push(violation("page_size", "must not be negative"));
                0
            }
        };
        let start = if request.page_token.is_empty() {
            0
        } else {
            request.page_token.parse::<u64>().unwrap_or_else(|_| {
                violations.push(violation(
                    "page_token",
                    "is not a token from `next_page_token`; leave it empty for the first page",
                ));
                0
            })
        };
        if !violations.is_empty() {
            return Err(invalid_argument(violations));
        }

        let state = self.state.lock().await;
        let matching: Vec<(&u64, &Task)> = state
            .tasks
            .iter()
            .filter(|(_, task)| request.state.is_none_or(|s| task.state == s))
            .filter(|(_, task)| {
                request
                    .labels
                    .iter()
                    .all(|(key, value)| task.labels.get(key) == Some(value))
            })
            .collect();
        let total_size = i64::try_from(matching.len()).unwrap_or(i64::MAX);
        let mut page = matching.into_iter().skip_while(|(n, _)| **n < start);
        let tasks: Vec<Task> = page
            .by_ref()
            .take(page_size)
            .map(|(_, t)| t.clone())
            .collect();
        let next_page_token = page.next().map(|(n, _)| n.to_string()).unwrap_or_default();
        Ok(Response::new(ListTasksResponse {
            tasks,
            next_page_token,
            total_size,
        }))
    }

    async fn update_task(
        &self,
        request: Request<UpdateTaskRequest>,
    ) -> Result<Response<Task>, Status> {
        let request = request.into_inner();
        let Some(new) = request.task else {
            return Err(invalid_argument(vec![violation("task", "is required")]));
        };
        let mut violations = Vec::new();
        let paths = match request.update_mask {
            Some(mask) if !mask.paths.is_empty() => mask_paths(&mask.paths, &mut violations),
            _ => set_fields(&new),
        };
        let mut state = self.state.lock().await;
        // A missing task is reported before anything about the new values.
        state.get(&request.id)?;
        check_task(&new, &state, "task", &mut violations);
        if paths.contains(&"title") && new.title.trim().is_empty() {
            violations.push(violation("task.title", "must not be blank"));
        }
        if paths.contains(&"parent_id") && new.parent_id.as_deref() == Some(request.id.as_str()) {
            violations.push(violation(
                "task.parent_id",
                "a task cannot be its own parent",
            ));
        }
        if !violations.is_empty() {
            return Err(invalid_argument(violations));
        }
        let task = state.get_mut(&request.id)?;
        for path in &paths {
            apply(task, &new, path);
        }
        task.update_time = Some(SystemTime::now().into());
        tracing::info!(id = %task.id, fields = ?paths, "updated task");
        Ok(Response::new(task.clone()))
    }

    async fn delete_task(
        &self,
        request: Request<DeleteTaskRequest>,
    ) -> Result<Response<()>, Status> {
        let id = &request.get_ref().id;
        let mut state = self.state.lock().await;
        let removed = task_number(id).and_then(|n| state.tasks.remove(&n));
        match removed {
            Some(_) => {
                tracing::info!(%id, "deleted task");
                Ok(Response::new(()))
            }
            None => Err(task_not_found(id)),
        }
    }

    async fn add_comment(
        &self,
        request: Request<AddCommentRequest>,
    ) -> Result<Response<Comment>, Status> {
        let request = request.into_inner();
        let mut violations = Vec::new();
        if request.author.trim().is_empty() {
            violations.push(violation("author", "must not be blank"));
        }
        if request.text.trim().is_empty() {
            violations.push(violation("text", "must not be blank"));
        }
        if !violations.is_empty() {
            return Err(invalid_argument(violations));
        }
        let mut state = self.state.lock().await;
        state.get(&request.task_id)?;
        let comment = state.comment(&request.author, &request.text, SystemTime::now());
        let task = state.get_mut(&request.task_id)?;
        match &request.reply_to {
            None => task.comments.push(comment.clone()),
            Some(parent) => match find_comment(&mut task.comments, parent) {
                Some(parent) => parent.replies.push(comment.clone()),
                None => return Err(comment_not_found(&request.task_id, parent)),
            },
        }
        task.update_time = comment.create_time;
        Ok(Response::new(comment))
    }

    type ExportTasksStream = Pin<Box<dyn Stream<Item = Result<Task, Status>> + Send + 'static>>;

    async fn export_tasks(
        &self,
        request: Request<ExportTasksRequest>,
    ) -> Result<Response<Self::ExportTasksStream>, Status> {
        // Read as the client takes them, EXPORT_BATCH tasks at a time (each under the lock
        // for only that long), not copied all at once: a copy of the whole tracker per call
        // was held until the client had read it or gone, and clients that read a few
        // messages and go (MCP tools collect up to `max_messages`) made every concurrent
        // export cost the tracker's size, a peak the allocator then kept. A client that goes
        // drops the stream, which stops reading.
        let wanted = request.get_ref().state;
        let state = Arc::clone(&self.state);
        let batches = futures_util::stream::unfold(Some(0), move |after: Option<u64>| {
            let state = Arc::clone(&state);
            async move {
                let after = after?;
                let batch: Vec<(u64, Task)> = {
                    let tracker = state.lock().await;
                    tracker
                        .tasks
                        .range(after + 1..)
                        .filter(|(_, task)| wanted.is_none_or(|s| task.state == s))
                        .take(EXPORT_BATCH)
                        .map(|(n, task)| (*n, task.clone()))
                        .collect()
                };
                let next = (batch.len() == EXPORT_BATCH)
                    .then(|| batch.last().map(|(n, _)| *n))
                    .flatten();
                (!batch.is_empty()).then(|| {
                    let tasks = batch.into_iter().map(|(_, task)| Ok(task));
                    (futures_util::stream::iter(tasks), next)
                })
            }
        });
        Ok(Response::new(Box::pin(futures_util::StreamExt::flatten(
            batches,
        ))))
    }

    async fn archive_tasks(
        &self,
        request: Request<ArchiveTasksRequest>,
    ) -> Result<Response<Operation>, Status> {
        let request = request.into_inner();
        let mut violations = Vec::new();
        let state = State::try_from(request.state).unwrap_or(State::Unspecified);
        if state == State::Unspecified {
            violations.push(violation("state", "must name a state"));
        }
        let per_task = match request.per_task {
            None => Ok(DEFAULT_PER_TASK),
            Some(d) => Duration::try_from(d),
        };
        let per_task = match per_task {
            Ok(d) if d <= MAX_PER_TASK => d,
            _ => {
                violations.push(violation(
                    "per_task",
                    &format!("must be from 0 to {} seconds", MAX_PER_TASK.as_secs()),
                ));
                DEFAULT_PER_TASK
            }
        };
        if !violations.is_empty() {
            return Err(invalid_argument(violations));
        }
        let ids: Vec<u64> = {
            let tracker = self.state.lock().await;
            tracker
                .tasks
                .iter()
                .filter(|(_, task)| task.state == state as i32)
                .map(|(n, _)| *n)
                .collect()
        };
        let metadata = ArchiveTasksMetadata {
            archived: 0,
            total: ids.len() as i32,
        };
        let operation = self
            .operations
            .start(pack("demo.v1.ArchiveTasksMetadata", &metadata))
            .await;
        let name = operation.name.clone();
        if ids.is_empty() {
            // The operation fails rather than the RPC: the work was accepted, then found
            // nothing to do.
            let mut details = ErrorDetails::new();
            details.add_precondition_failure_violation(
                "STATE_EMPTY",
                format!("demo.v1.State/{}", state.as_str_name()),
                "no task is in this state; TaskService_ListTasks shows the tasks",
            );
            let status = Status::with_error_details(
                Code::FailedPrecondition,
                format!("no task is in state {}", state.as_str_name()),
                details,
            );
            self.operations.finish(&name, Err(status)).await;
        } else {
            tracing::info!(operation = %name, tasks = ids.len(), "archiving started");
            tokio::spawn(archive(self.clone(), name, state, ids, per_task));
        }
        Ok(Response::new(operation))
    }
}

fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration::try_from(d).unwrap_or_default()
}

fn is_negative(d: &prost_types::Duration) -> bool {
    d.seconds < 0 || d.nanos < 0
}

mod fields;
mod status;

use fields::*;
use status::*;

#[cfg(test)]
mod tests;
