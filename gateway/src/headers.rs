//! Static gRPC metadata from `--header 'name: value'`. Values may be credentials: nothing here
//! prints them, and errors name the header only.

use std::fmt;

use base64::Engine as _;
use tonic::metadata::{AsciiMetadataKey, BinaryMetadataKey, MetadataMap, MetadataValue};

use crate::error::Error;

/// The `--header` metadata, sent with every reflection request and every tool call.
///
/// `Debug` lists the header names only.
#[derive(Clone, Default)]
pub struct Headers {
    metadata: MetadataMap,
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Headers {
    /// Parses `name: value` (the form curl and grpcurl take). A name ending in `-bin` takes
    /// base64 and is sent as binary metadata. A name given twice sends both values.
    ///
    /// # Errors
    ///
    /// A missing colon, an invalid name, a value that is not visible ASCII, or bad base64; the
    /// message names the header, never its value.
    pub fn add(&mut self, header: &str) -> Result<(), Error> {
        let Some((name, value)) = header.split_once(':') else {
            // The whole argument may be a secret pasted without its name: do not echo it.
            return Err(Error::new(
                "--header expects `name: value`, for example --header 'authorization: Bearer …'",
            ));
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim();
        let invalid = |what: &str| Error::new(format!("--header {name}: {what}"));
        if name.is_empty() {
            return Err(Error::new("--header: the header name is empty"));
        }
        if name.ends_with("-bin") {
            let key = BinaryMetadataKey::from_bytes(name.as_bytes())
                .map_err(|_| invalid("not a valid gRPC metadata name"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(value)
                .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(value))
                .map_err(|_| invalid("a `-bin` header takes a base64 value"))?;
            self.metadata
                .append_bin(key, MetadataValue::from_bytes(&bytes));
        } else {
            let key = AsciiMetadataKey::from_bytes(name.as_bytes()).map_err(|_| {
                invalid(
                    "not a valid gRPC metadata name (lower-case letters, digits, `-`, `_`, `.`)",
                )
            })?;
            if key.as_str().starts_with("grpc-") {
                return Err(invalid("names starting with `grpc-` are reserved by gRPC"));
            }
            let value = value
                .parse()
                .map_err(|_| invalid("the value must be visible ASCII text"))?;
            self.metadata.append(key, value);
        }
        Ok(())
    }

    /// The metadata to send.
    pub fn metadata(&self) -> MetadataMap {
        self.metadata.clone()
    }

    /// The header names, for logs.
    pub fn names(&self) -> Vec<String> {
        let names: Vec<String> = self
            .metadata
            .keys()
            .map(|key| match key {
                tonic::metadata::KeyRef::Ascii(key) => key.as_str().to_owned(),
                tonic::metadata::KeyRef::Binary(key) => key.as_str().to_owned(),
            })
            // `keys` yields each name once.
            .collect();
        names
    }

    /// Whether no header was given.
    pub fn is_empty(&self) -> bool {
        self.metadata.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ascii_and_binary_headers() {
        let mut headers = Headers::default();
        headers.add("Authorization: Bearer s3cret").unwrap();
        headers.add("x-tenant:acme").unwrap();
        headers.add("x-tenant: other").unwrap();
        headers.add("x-trace-bin: AAEC").unwrap();
        let metadata = headers.metadata();
        assert_eq!(metadata.get("authorization").unwrap(), "Bearer s3cret");
        let tenants: Vec<_> = metadata.get_all("x-tenant").iter().collect();
        assert_eq!(tenants, ["acme", "other"]);
        assert_eq!(
            metadata.get_bin("x-trace-bin").unwrap().to_bytes().unwrap(),
            &[0u8, 1, 2][..]
        );
        assert_eq!(
            headers.names(),
            ["authorization", "x-tenant", "x-trace-bin"]
        );
    }

    #[test]
    fn errors_and_debug_never_show_values() {
        let mut headers = Headers::default();
        headers.add("authorization: Bearer s3cret").unwrap();
        assert_eq!(format!("{headers:?}"), "[\"authorization\"]");
        for (input, expected) in [
            ("Bearer s3cret", "expects `name: value`"),
            (
                "x-key: s3cret\u{7f}",
                "--header x-key: the value must be visible ASCII",
            ),
            (
                "bad key: s3cret",
                "--header bad key: not a valid gRPC metadata name",
            ),
            (
                "x-key-bin: s3cret!",
                "--header x-key-bin: a `-bin` header takes a base64 value",
            ),
            ("grpc-timeout: 1S", "reserved by gRPC"),
            (": s3cret", "the header name is empty"),
        ] {
            let error = Headers::default().add(input).unwrap_err().to_string();
            assert!(error.contains(expected), "{input}: {error}");
            assert!(!error.contains("s3cret"), "{input}: {error}");
        }
    }
}
