//! Unit tests of the task service.

use super::*;

#[test]
fn mask_paths_accept_both_spellings_and_reject_output_only_fields() {
    let mut violations = Vec::new();
    let paths = ["dueTime", "state", "owner", "id", "colour"].map(str::to_owned);
    let found = mask_paths(&paths, &mut violations);
    assert_eq!(found, ["due_time", "person", "state", "team"]);
    let fields: Vec<&str> = violations.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["update_mask", "update_mask"]);
    assert!(
        violations[0].1.contains("set by the server"),
        "{violations:?}"
    );
    assert!(violations[1].1.contains("not a field"), "{violations:?}");
}

#[tokio::test]
async fn missing_task_is_not_found_with_details() {
    let store = TaskStore::with_sample_data();
    let status = store
        .get_task(Request::new(GetTaskRequest {
            id: "task-99".to_owned(),
        }))
        .await
        .expect_err("no such task");
    assert_eq!(status.code(), Code::NotFound);
    let details = status.get_error_details();
    assert_eq!(
        details.error_info().map(|i| i.reason.as_str()),
        Some("TASK_NOT_FOUND")
    );
    assert_eq!(
        details.resource_info().map(|i| i.resource_name.as_str()),
        Some("task-99")
    );
}

#[tokio::test]
async fn create_lists_every_bad_field() {
    let store = TaskStore::with_sample_data();
    let task = Task {
        title: " ".to_owned(),
        story_points: Some(-1),
        parent_id: Some("task-42".to_owned()),
        ..Task::default()
    };
    let status = store
        .create_task(Request::new(CreateTaskRequest { task: Some(task) }))
        .await
        .expect_err("invalid");
    assert_eq!(status.code(), Code::InvalidArgument);
    let details = status.get_error_details();
    let mut fields: Vec<&str> = details
        .bad_request()
        .map(|b| {
            b.field_violations
                .iter()
                .map(|v| v.field.as_str())
                .collect()
        })
        .unwrap_or_default();
    fields.sort_unstable();
    assert_eq!(
        fields,
        ["task.parent_id", "task.story_points", "task.title"]
    );
}

#[tokio::test]
async fn replies_nest_under_their_comment() {
    let store = TaskStore::with_sample_data();
    let reply = store
        .add_comment(Request::new(AddCommentRequest {
            task_id: "task-1".to_owned(),
            reply_to: Some("c-2".to_owned()),
            author: "Grace".to_owned(),
            text: "Thanks!".to_owned(),
        }))
        .await
        .expect("reply")
        .into_inner();
    let task = store
        .get_task(Request::new(GetTaskRequest {
            id: "task-1".to_owned(),
        }))
        .await
        .expect("task")
        .into_inner();
    assert_eq!(task.comments[0].replies[0].replies[0].id, reply.id);
}

#[tokio::test]
async fn update_with_mask_changes_only_the_named_fields() {
    let store = TaskStore::with_sample_data();
    let new = Task {
        title: "ignored".to_owned(),
        state: State::Done.into(),
        ..Task::default()
    };
    let task = store
        .update_task(Request::new(UpdateTaskRequest {
            id: "task-2".to_owned(),
            task: Some(new),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["state".to_owned()],
            }),
        }))
        .await
        .expect("updated")
        .into_inner();
    assert_eq!(task.state, State::Done as i32);
    assert_eq!(task.title, "Fix the flaky login test");
}

/// An export streams every matching task in order, past its batches, reading the tracker as
/// the client takes them: a task created while the stream is read comes out too, and
/// dropping the stream early is all a client that has seen enough does.
#[tokio::test]
async fn export_streams_every_matching_task_in_batches() {
    use futures_util::StreamExt as _;
    let store = TaskStore::with_sample_data();
    let sample = store.state.lock().await.tasks.len();
    for i in 0..EXPORT_BATCH * 2 + 3 {
        let task = Task {
            title: format!("export {i}"),
            state: if i % 2 == 0 { State::Done } else { State::Todo }.into(),
            ..Task::default()
        };
        store
            .create_task(Request::new(CreateTaskRequest { task: Some(task) }))
            .await
            .expect("created");
    }
    let export = |state: Option<State>| {
        store.export_tasks(Request::new(ExportTasksRequest {
            state: state.map(Into::into),
        }))
    };
    let mut stream = export(None).await.expect("export").into_inner();
    let first = stream.next().await.expect("a task").expect("ok");
    assert_eq!(first.id, "task-1");
    // Created after the export began: read when the stream gets there.
    store
        .create_task(Request::new(CreateTaskRequest {
            task: Some(Task {
                title: "late".to_owned(),
                ..Task::default()
            }),
        }))
        .await
        .expect("created");
    let rest: Vec<Task> = stream.map(|task| task.expect("ok")).collect().await;
    let ids: Vec<String> = std::iter::once(first.id)
        .chain(rest.iter().map(|task| task.id.clone()))
        .collect();
    let total = sample + EXPORT_BATCH * 2 + 3 + 1;
    let expected: Vec<String> = (1..=total).map(|n| format!("task-{n}")).collect();
    assert_eq!(ids, expected);
    let done: Vec<Task> = export(Some(State::Done))
        .await
        .expect("export")
        .into_inner()
        .map(|task| task.expect("ok"))
        .collect()
        .await;
    assert!(done.len() > EXPORT_BATCH, "{}", done.len());
    assert!(done.iter().all(|task| task.state == State::Done as i32));
    // Taken in part and dropped.
    let mut stream = export(None).await.expect("export").into_inner();
    assert!(stream.next().await.is_some());
    drop(stream);
}
