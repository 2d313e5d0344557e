//! gRPC `Status` → text a model can act on: the code name, the message and the decoded
//! `google.rpc` details. `DebugInfo` (stack traces) is never included, and messages of
//! statuses that tonic made from a local transport error (which can name internal hosts)
//! are replaced by a generic sentence.

use std::{borrow::Cow, fmt::Write as _};

use tonic::{Code, Status};
use tonic_types::{ErrorDetail, StatusExt as _};

/// The canonical upper-snake name of a gRPC code (`NOT_FOUND`).
pub(crate) fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Describe a status for the model.
pub(crate) fn describe_status(status: &Status) -> String {
    let code = code_name(status.code());
    // A status carrying a source error was made locally from a transport failure; its
    // message may hold addresses and error chains that must not leak.
    let message: Cow<'_, str> = if std::error::Error::source(status).is_some() {
        Cow::Owned(format!(
            "the request could not be completed by the gRPC transport: {}",
            transport_cause(status)
        ))
    } else {
        Cow::Borrowed(status.message())
    };
    let mut text = if message.is_empty() {
        format!("gRPC error {code}")
    } else {
        format!("gRPC error {code}: {message}")
    };
    // tonic's codec refuses a message over the call's limit with OUT_OF_RANGE.
    if status.code() == Code::OutOfRange && message.contains("message length too large") {
        text.push_str(
            "\nThe response is larger than this MCP server accepts. Ask for less (a smaller \
             page size or limit, a narrower filter); the operator can raise the limit \
             (ToolSet::with_max_decoding_message_size, grpc-mcp-gateway \
             --max-decoding-message-size).",
        );
    }
    for detail in status.get_error_details_vec() {
        describe_detail(&mut text, detail);
    }
    text
}

/// Logs a call's transport failure (a status made locally from a transport error: the backend
/// could not be reached, its TLS was refused, the connection broke…) at `warn`, with the whole error chain. The model
/// is told the cause without addresses ([`describe_status`]); the operator, who needs the
/// address, reads it here. A status the backend sent is not logged: it is the backend's answer.
pub(crate) fn log_transport_failure(tool: &str, rpc_path: &str, status: &Status) {
    if std::error::Error::source(status).is_none() {
        return;
    }
    let chain = causes(status)
        .map(|error| error.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    tracing::warn!(
        tool,
        rpc = rpc_path,
        code = code_name(status.code()),
        cause = %chain,
        "the gRPC transport failed"
    );
}

/// What went wrong in the transport, in words that name the cause and what fixes it but no
/// address: the error chain of a transport failure can name internal hosts, which stay in the
/// logs. Known causes are matched in the chain's texts (hyper, h2, rustls, the OS).
fn transport_cause(status: &Status) -> &'static str {
    let chain: String = causes(status)
        .map(|error| error.to_string().to_lowercase() + "\n")
        .collect();
    const CAUSES: &[(&[&str], &str)] = &[
        (
            &["connection refused"],
            "the connection was refused: the server is not running or not listening there",
        ),
        (
            &["certificaterequired", "certificate required"],
            "the server requires a client certificate (mutual TLS), and none was presented",
        ),
        (
            &["unknownissuer", "unknown issuer"],
            "the server's TLS certificate is not signed by a trusted authority (a private CA \
             must be trusted explicitly)",
        ),
        (
            &["notvalidforname", "not valid for name"],
            "the server's TLS certificate is issued to another name than the one connected to",
        ),
        (
            &["expired"],
            "the server's TLS certificate has expired or is not yet valid",
        ),
        (
            &[
                "invalidcontenttype",
                "corrupt message",
                "wrong version number",
            ],
            "the server does not speak TLS: the target URL says https:// for a plain-text server",
        ),
        (
            &[
                "frame with invalid size",
                "invalid http version",
                "connection reset",
                "broken pipe",
            ],
            "the connection broke at once: an http:// target for a TLS server, or a server that \
             is not gRPC",
        ),
        (
            &["dns error", "failed to lookup", "name or service not known"],
            "the server's name does not resolve (DNS)",
        ),
        (
            &["timed out", "deadline has elapsed"],
            "connecting timed out",
        ),
    ];
    CAUSES
        .iter()
        .find(|(needles, _)| needles.iter().any(|needle| chain.contains(needle)))
        .map_or(
            "the cause is in this MCP server's logs (the gRPC transport's error chain)",
            |(_, cause)| cause,
        )
}

/// The error chain under `status`, its source first.
fn causes(status: &Status) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    std::iter::successors(std::error::Error::source(status), |error| error.source())
}

fn describe_detail(text: &mut String, detail: ErrorDetail) {
    // Writing to a String cannot fail.
    match detail {
        ErrorDetail::BadRequest(bad) => {
            text.push_str("\nInvalid fields:");
            for v in bad.field_violations {
                let _ = write!(text, "\n- `{}`: {}", v.field, v.description);
                if !v.reason.is_empty() {
                    let _ = write!(text, " (reason: {})", v.reason);
                }
            }
        }
        ErrorDetail::ErrorInfo(info) => {
            let _ = write!(text, "\nError info: reason {}", info.reason);
            if !info.domain.is_empty() {
                let _ = write!(text, ", domain {}", info.domain);
            }
            let mut metadata: Vec<_> = info.metadata.into_iter().collect();
            metadata.sort();
            for (key, value) in metadata {
                let _ = write!(text, ", {key}={value}");
            }
        }
        ErrorDetail::RetryInfo(retry) => match retry.retry_delay {
            Some(delay) => {
                let _ = write!(text, "\nRetry after {:.3} s", delay.as_secs_f64());
            }
            None => text.push_str("\nThe call can be retried"),
        },
        ErrorDetail::QuotaFailure(quota) => {
            text.push_str("\nQuota exceeded:");
            for v in quota.violations {
                let _ = write!(text, "\n- {}: {}", v.subject, v.description);
            }
        }
        ErrorDetail::PreconditionFailure(failure) => {
            text.push_str("\nFailed preconditions:");
            for v in failure.violations {
                let _ = write!(text, "\n- {} {}: {}", v.r#type, v.subject, v.description);
            }
        }
        ErrorDetail::ResourceInfo(info) => {
            let _ = write!(
                text,
                "\nResource: {} `{}`",
                info.resource_type, info.resource_name
            );
            if !info.description.is_empty() {
                let _ = write!(text, ": {}", info.description);
            }
        }
        ErrorDetail::Help(help) => {
            for link in help.links {
                let _ = write!(text, "\nHelp: {} <{}>", link.description, link.url);
            }
        }
        ErrorDetail::LocalizedMessage(message) => {
            let _ = write!(text, "\n{}", message.message);
        }
        ErrorDetail::RequestInfo(info) => {
            let _ = write!(text, "\nRequest id: {}", info.request_id);
        }
        // DebugInfo holds stack traces: never shown.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use tonic_types::{ErrorDetails, FieldViolation};

    use super::*;

    #[test]
    fn bad_request_and_retry_details_are_listed() {
        let mut details =
            ErrorDetails::with_bad_request(vec![FieldViolation::new("name", "must not be empty")]);
        details.set_retry_info(Some(std::time::Duration::from_millis(1500)));
        details.set_debug_info(vec!["secret frame".into()], "internal detail");
        let status = Status::with_error_details(Code::InvalidArgument, "bad item", details);
        let text = describe_status(&status);
        assert_eq!(
            text,
            "gRPC error INVALID_ARGUMENT: bad item\nRetry after 1.500 s\nInvalid fields:\n- `name`: must not be empty"
        );
    }

    #[test]
    fn transport_errors_do_not_leak_their_message() {
        let io = std::io::Error::other("connect to 10.1.2.3:50051 refused");
        let status = Status::from_error(Box::new(io));
        let text = describe_status(&status);
        assert!(!text.contains("10.1.2.3"), "{text}");
    }

    #[test]
    fn transport_errors_name_their_cause() {
        for (chain, cause) in [
            (
                "tcp connect error: Connection refused (os error 111)",
                "was refused",
            ),
            (
                "invalid peer certificate: UnknownIssuer",
                "not signed by a trusted",
            ),
            (
                "received fatal alert: CertificateRequired",
                "requires a client certificate",
            ),
            (
                "received corrupt message of type InvalidContentType",
                "does not speak TLS",
            ),
            (
                "dns error: failed to lookup address information",
                "does not resolve",
            ),
            ("something else entirely at 10.1.2.3", "MCP server's logs"),
        ] {
            let status = Status::from_error(Box::new(std::io::Error::other(chain)));
            let text = describe_status(&status);
            assert!(text.contains(cause), "{chain}: {text}");
            assert!(!text.contains("10.1.2.3"), "{text}");
        }
    }
}
