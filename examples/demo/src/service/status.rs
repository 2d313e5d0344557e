//! The gRPC statuses the service answers with, and their error details.

use super::*;

pub(super) fn violation(field: &str, description: &str) -> (String, String) {
    (field.to_owned(), description.to_owned())
}

/// `INVALID_ARGUMENT` with a `BadRequest` detail listing every violation.
pub(super) fn invalid_argument(violations: Vec<(String, String)>) -> Status {
    let mut fields: Vec<&str> = violations.iter().map(|(field, _)| field.as_str()).collect();
    fields.dedup();
    let message = format!("invalid value for {}", fields.join(", "));
    let mut details = ErrorDetails::new();
    for (field, description) in &violations {
        details.add_bad_request_violation(field, description);
    }
    Status::with_error_details(Code::InvalidArgument, message, details)
}

pub(super) fn task_not_found(id: &str) -> Status {
    not_found(
        "TASK_NOT_FOUND",
        "demo.v1.Task",
        id,
        format!("no task has the id `{id}`; TaskService_ListTasks lists the existing ones"),
    )
}

pub(super) fn comment_not_found(task_id: &str, id: &str) -> Status {
    not_found(
        "COMMENT_NOT_FOUND",
        "demo.v1.Comment",
        id,
        format!("task `{task_id}` has no comment `{id}`; TaskService_GetTask shows its comments"),
    )
}

/// `NOT_FOUND` with `ErrorInfo` (a machine-readable reason) and `ResourceInfo` (what is
/// missing) details.
pub(super) fn not_found(reason: &str, resource_type: &str, name: &str, message: String) -> Status {
    let mut details = ErrorDetails::new();
    details
        .set_error_info(
            reason,
            ERROR_DOMAIN,
            HashMap::from([("resource".to_owned(), name.to_owned())]),
        )
        .set_resource_info(resource_type, name, "", "it does not exist or was deleted");
    Status::with_error_details(Code::NotFound, message, details)
}
