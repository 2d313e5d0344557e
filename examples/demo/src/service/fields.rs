//! Checking a task's fields and applying field masks.

use super::*;

/// Checks the values of `task` that are wrong whatever the call, under the field path `at`.
pub(super) fn check_task(
    task: &Task,
    state: &Tracker,
    at: &str,
    violations: &mut Vec<(String, String)>,
) {
    if task.title.chars().count() > MAX_TITLE_CHARS {
        violations.push(violation(
            &format!("{at}.title"),
            &format!("must be at most {MAX_TITLE_CHARS} characters"),
        ));
    }
    match &task.owner {
        Some(Owner::Person(person)) if person.name.trim().is_empty() => {
            violations.push(violation(&format!("{at}.person.name"), "must not be blank"));
        }
        Some(Owner::Team(team)) if team.trim().is_empty() => {
            violations.push(violation(&format!("{at}.team"), "must not be blank"));
        }
        _ => {}
    }
    if task.estimate.as_ref().is_some_and(is_negative) {
        violations.push(violation(&format!("{at}.estimate"), "must not be negative"));
    }
    if task.story_points.is_some_and(|points| points < 0) {
        violations.push(violation(
            &format!("{at}.story_points"),
            "must not be negative",
        ));
    }
    if let Some(parent) = &task.parent_id
        && !state.exists(parent)
    {
        violations.push(violation(
            &format!("{at}.parent_id"),
            &format!("no task has the id `{parent}`"),
        ));
    }
    let mut negative: Vec<&String> = task
        .time_logged
        .iter()
        .filter_map(|(name, d)| is_negative(d).then_some(name))
        .collect();
    negative.sort();
    for name in negative {
        violations.push(violation(
            &format!("{at}.time_logged[{name:?}]"),
            "must not be negative",
        ));
    }
}

/// The mask's paths as `UPDATABLE` entries. JSON clients write lowerCamel paths (`dueTime`),
/// protobuf ones snake_case; both are accepted.
pub(super) fn mask_paths(
    paths: &[String],
    violations: &mut Vec<(String, String)>,
) -> Vec<&'static str> {
    let mut found = Vec::new();
    for path in paths {
        let snake = to_snake_case(path);
        let name = match snake.as_str() {
            "owner" => Some("owner"),
            other => UPDATABLE.iter().copied().find(|p| *p == other),
        };
        match name {
            // `owner` is the oneof: it replaces whichever member is set.
            Some("owner") => found.extend(["person", "team"]),
            Some(name) => found.push(name),
            None if OUTPUT_ONLY.contains(&snake.as_str()) => violations.push(violation(
                "update_mask",
                &format!("`{path}` is set by the server and cannot be changed"),
            )),
            None => violations.push(violation(
                "update_mask",
                &format!(
                    "`{path}` is not a field of Task; valid: {}",
                    UPDATABLE.join(", ")
                ),
            )),
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Without a mask, every field that is set in `task` changes.
pub(super) fn set_fields(task: &Task) -> Vec<&'static str> {
    let set = [
        !task.title.is_empty(),
        !task.description.is_empty(),
        task.state != 0,
        task.priority != 0,
        !task.labels.is_empty(),
        matches!(task.owner, Some(Owner::Person(_))),
        matches!(task.owner, Some(Owner::Team(_))),
        task.due_time.is_some(),
        task.estimate.is_some(),
        task.story_points.is_some(),
        task.parent_id.is_some(),
        !task.time_logged.is_empty(),
    ];
    UPDATABLE
        .iter()
        .zip(set)
        .filter_map(|(path, set)| set.then_some(*path))
        .collect()
}

pub(super) fn apply(task: &mut Task, new: &Task, path: &str) {
    match path {
        "title" => task.title.clone_from(&new.title),
        "description" => task.description.clone_from(&new.description),
        "state" => task.state = new.state,
        "priority" => task.priority = new.priority,
        "labels" => task.labels.clone_from(&new.labels),
        // Setting either member replaces the owner; clearing it needs the member that is set.
        "person" | "team" => match (&new.owner, &task.owner) {
            (Some(owner), _) => task.owner = Some(owner.clone()),
            (None, Some(Owner::Person(_))) if path == "person" => task.owner = None,
            (None, Some(Owner::Team(_))) if path == "team" => task.owner = None,
            (None, _) => {}
        },
        "due_time" => task.due_time = new.due_time,
        "estimate" => task.estimate = new.estimate,
        "story_points" => task.story_points = new.story_points,
        "parent_id" => task.parent_id.clone_from(&new.parent_id),
        "time_logged" => task.time_logged.clone_from(&new.time_logged),
        _ => {}
    }
}

pub(super) fn find_comment<'a>(comments: &'a mut [Comment], id: &str) -> Option<&'a mut Comment> {
    for comment in comments {
        if comment.id == id {
            return Some(comment);
        }
        if let Some(found) = find_comment(&mut comment.replies, id) {
            return Some(found);
        }
    }
    None
}

pub(super) fn task_number(id: &str) -> Option<u64> {
    id.strip_prefix(TASK_ID_PREFIX)?.parse().ok()
}

pub(super) fn to_snake_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 4);
    for c in path.trim().chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
