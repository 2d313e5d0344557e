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
