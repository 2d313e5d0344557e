//! The `"mcp.stream"` input of tools whose RPC streams responses: a shorter window and a lower
//! message bound for one call (see `tonic_mcp_schema::stream_control`). Taken out of the
//! arguments before they are checked against the request message.

use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;
use tonic_mcp_schema::stream_control::{
    KEEP_ON_CANCEL_KEY, MAX_MESSAGES_KEY, STREAM_CONTROL_KEY, WINDOW_KEY,
};

use tonic_mcp_codec::{JsonPath, Problem};

/// What one call asks of its response stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StreamControl {
    pub(crate) window: Option<Duration>,
    pub(crate) max_messages: Option<u32>,
    /// Run as a task and cancelled, complete with what was received.
    pub(crate) keep_on_cancel: bool,
}

impl StreamControl {
    /// Whether the arguments of a call ask a task to keep its messages when cancelled (read
    /// before the call starts, without taking anything out).
    pub(crate) fn keeps_on_cancel(arguments: Option<&JsonObject>) -> bool {
        arguments
            .and_then(|arguments| arguments.get(STREAM_CONTROL_KEY))
            .and_then(|control| control.get(KEEP_ON_CANCEL_KEY))
            == Some(&Value::Bool(true))
    }

    /// Removes the stream control from `arguments` and reads it.
    pub(crate) fn take(arguments: &mut JsonObject) -> Result<Self, Vec<Problem>> {
        let Some(value) = arguments.remove(STREAM_CONTROL_KEY) else {
            return Ok(Self::default());
        };
        let path = JsonPath::default().with_key(STREAM_CONTROL_KEY);
        let problem = |path: JsonPath, message: String| Problem { path, message };
        let Value::Object(control) = value else {
            return Err(vec![problem(
                path,
                format!(
                    "expected an object such as {{\"{WINDOW_KEY}\": 2000, \"{MAX_MESSAGES_KEY}\": 10}}"
                ),
            )]);
        };
        let mut problems = Vec::new();
        let mut read = |key: &str, max: u64| -> Option<u64> {
            let value = control.get(key)?;
            let n = value.as_u64().filter(|n| (1..=max).contains(n));
            if n.is_none() {
                problems.push(problem(
                    path.with_key(key),
                    format!("expected an integer from 1 to {max}, got {value}"),
                ));
            }
            n
        };
        let window = read(WINDOW_KEY, 86_400_000).map(Duration::from_millis);
        let max_messages =
            read(MAX_MESSAGES_KEY, u64::from(u32::MAX)).and_then(|n| u32::try_from(n).ok());
        let keep_on_cancel = match control.get(KEEP_ON_CANCEL_KEY) {
            None => false,
            Some(Value::Bool(keep)) => *keep,
            Some(other) => {
                problems.push(problem(
                    path.with_key(KEEP_ON_CANCEL_KEY),
                    format!("expected true or false, got {other}"),
                ));
                false
            }
        };
        for key in control.keys() {
            if ![WINDOW_KEY, MAX_MESSAGES_KEY, KEEP_ON_CANCEL_KEY].contains(&key.as_str()) {
                problems.push(problem(
                    path.with_key(key),
                    format!(
                        "unknown property; allowed: {WINDOW_KEY}, {MAX_MESSAGES_KEY}, \
                         {KEEP_ON_CANCEL_KEY}"
                    ),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            window,
            max_messages,
            keep_on_cancel,
        })
    }

    /// The deadline and bound of the call: the smaller of what it asks and what the tool allows.
    pub(crate) fn apply(self, timeout: Duration, max_messages: u32) -> (Duration, u32) {
        (
            self.window.map_or(timeout, |window| window.min(timeout)),
            self.max_messages
                .map_or(max_messages, |asked| asked.min(max_messages)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(arguments: Value) -> (Result<StreamControl, Vec<String>>, JsonObject) {
        let Value::Object(mut arguments) = arguments else {
            unreachable!("an object")
        };
        let taken = StreamControl::take(&mut arguments)
            .map_err(|problems| problems.iter().map(ToString::to_string).collect());
        (taken, arguments)
    }

    #[test]
    fn reads_and_removes_the_control() {
        let (taken, rest) = take(serde_json::json!({
            "key": "a", "mcp.stream": {"windowMs": 1500, "maxMessages": 3}
        }));
        let control = taken.unwrap_or_default();
        assert_eq!(control.window, Some(Duration::from_millis(1500)));
        assert_eq!(control.max_messages, Some(3));
        assert_eq!(
            rest,
            serde_json::json!({"key": "a"})
                .as_object()
                .cloned()
                .unwrap_or_default()
        );
        assert_eq!(
            control.apply(Duration::from_secs(30), 100),
            (Duration::from_millis(1500), 3)
        );
        assert_eq!(
            control.apply(Duration::from_secs(1), 2),
            (Duration::from_secs(1), 2)
        );
        assert_eq!(take(serde_json::json!({})).0, Ok(StreamControl::default()));
    }

    #[test]
    fn names_each_problem() {
        let (taken, _) = take(
            serde_json::json!({"mcp.stream": {"windowMs": 0, "maxMessages": "5", "every": 1}}),
        );
        assert_eq!(
            taken,
            Err(vec![
                "$[\"mcp.stream\"].windowMs: expected an integer from 1 to 86400000, got 0".to_owned(),
                "$[\"mcp.stream\"].maxMessages: expected an integer from 1 to 4294967295, got \"5\"".to_owned(),
                "$[\"mcp.stream\"].every: unknown property; allowed: windowMs, maxMessages, keepOnCancel".to_owned(),
            ])
        );
        let (taken, _) = take(serde_json::json!({"mcp.stream": 5}));
        assert!(taken.is_err_and(|p| p[0].contains("expected an object")));
    }
}
