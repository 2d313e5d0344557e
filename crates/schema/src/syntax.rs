//! Which proto syntaxes the stack can read: proto2 and proto3, not editions.

use crate::error::{Error, Result};

/// Checks the `syntax` of every file, before any of them reaches prost-reflect or prost-build.
///
/// `files` are (file name, `FileDescriptorProto.syntax`) pairs, imports included. protoc
/// leaves `syntax` unset for proto2.
///
/// # Errors
///
/// [`Error::Unsupported`] naming the first file that is an editions file (`edition = "2023"`)
/// or has an unknown syntax. An editions file names the parts of the stack that cannot read it
/// and what would be needed; prost-reflect 0.16 also panics while it describes that refusal,
/// which is why every reader of descriptors calls this first.
pub fn check<'f>(files: impl IntoIterator<Item = (&'f str, Option<&'f str>)>) -> Result<()> {
    for (name, syntax) in files {
        match syntax.unwrap_or("proto2") {
            "proto2" | "proto3" => {}
            "editions" => {
                return Err(Error::Unsupported {
                    element: name.to_owned(),
                    reason: "editions files (`edition = \"2023\"` and later) are not supported: \
                             prost-reflect 0.16, which reads the descriptors for the tool \
                             schemas and proto3-JSON (in the plugin, the runtime and the \
                             gateway), refuses them, and prost-build 0.14, which generates the \
                             Rust types, cannot compile them; both would need to resolve \
                             editions features. Use `syntax = \"proto3\"` or \
                             `syntax = \"proto2\"`"
                        .to_owned(),
                });
            }
            other => {
                return Err(Error::Unsupported {
                    element: name.to_owned(),
                    reason: format!("unknown syntax `{other}`; valid are `proto2` and `proto3`"),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto2_and_proto3_pass_and_editions_names_the_stack() {
        assert!(check([("a.proto", None), ("b.proto", Some("proto3"))]).is_ok());
        let Err(Error::Unsupported { element, reason }) =
            check([("a.proto", Some("proto3")), ("ed.proto", Some("editions"))])
        else {
            panic!("editions must be refused");
        };
        assert_eq!(element, "ed.proto");
        for needle in ["prost-reflect", "prost-build", "proto3"] {
            assert!(reason.contains(needle), "{needle} not in {reason}");
        }
        assert!(check([("x.proto", Some("proto4"))]).is_err());
    }
}
