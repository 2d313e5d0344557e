//! Literal tokens for big values: the descriptor set as a byte string and schema texts as raw
//! strings. Each is one `proc_macro2::Literal`, which syn keeps as a token and prettyplease
//! prints as it is, so a schema stays readable JSON in the generated file.

use std::str::FromStr as _;

use proc_macro2::Literal;

use tonic_mcp_schema::error::{Error, Result};

/// `bytes` as a byte string literal, written exactly as `proc_macro2::Literal::byte_string`
/// writes it (a test checks) without its `write!` per escaped byte: the descriptor set of a
/// big package is hundreds of kilobytes, most of them escaped.
pub(super) fn byte_string(bytes: &[u8]) -> Result<Literal> {
    literal(&byte_string_source(bytes), "the descriptor set")
}

/// `text` as a raw string literal (`r#"…"#`, with as many `#` as `text` needs). `what` names
/// the text for the error, which only a bare carriage return (not allowed in a raw string,
/// never in minified JSON) could cause.
pub(super) fn raw_string(text: &str, what: &str) -> Result<Literal> {
    let mut hashes = String::from("#");
    while text.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    let mut source = String::with_capacity(text.len() + 2 * hashes.len() + 3);
    source.push('r');
    source.push_str(&hashes);
    source.push('"');
    source.push_str(text);
    source.push('"');
    source.push_str(&hashes);
    literal(&source, what)
}

fn literal(source: &str, what: &str) -> Result<Literal> {
    Literal::from_str(source)
        .map_err(|e| Error::Internal(format!("{what} is not a Rust literal: {e}")))
}

fn byte_string_source(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(bytes.len() * 2 + 3);
    out.extend_from_slice(b"b\"");
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            // `\0` before an octal digit would read as an octal escape to a human.
            b'\0' if matches!(bytes.get(i + 1), Some(b'0'..=b'7')) => {
                out.extend_from_slice(b"\\x00");
            }
            b'\0' => out.extend_from_slice(b"\\0"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\x20'..=b'\x7E' => out.push(b),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]),
        }
    }
    out.push(b'"');
    // Only ASCII was written.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_string_is_proc_macro2s() {
        let mut cases: Vec<Vec<u8>> = vec![(0..=255).collect(), (0..=255).rev().collect()];
        // Every pair, so that each escape is seen before every byte (`\0` then a digit).
        cases.push(
            (0..=255u8)
                .flat_map(|a| (0..=255u8).flat_map(move |b| [a, b]))
                .collect(),
        );
        cases.push(Vec::new());
        cases.push(b"\0".to_vec());
        cases.push(b"\x007\08\0\0".to_vec());
        for bytes in cases {
            assert_eq!(
                byte_string(&bytes).unwrap().to_string(),
                Literal::byte_string(&bytes).to_string(),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn raw_strings_take_the_hashes_they_need() {
        for (text, source) in [
            ("", r##"r#""#"##),
            (r#"{"a":"b"}"#, r##"r#"{"a":"b"}"#"##),
            (r##"{"a":"#b"}"##, r###"r##"{"a":"#b"}"##"###),
            (r###""##"#"###, r####"r###""##"#"###"####),
            ("ünï\tcode\n", "r#\"ünï\tcode\n\"#"),
        ] {
            let literal = raw_string(text, "a text").unwrap();
            assert_eq!(literal.to_string(), source);
            let parsed: syn::LitStr = syn::parse2(quote::quote!(#literal)).unwrap();
            assert_eq!(parsed.value(), text);
        }
    }

    #[test]
    fn a_bare_carriage_return_is_an_error_not_a_panic() {
        let error = raw_string("a\rb", "the input schema of Svc_Get").unwrap_err();
        assert!(
            error.to_string().contains("the input schema of Svc_Get"),
            "{error}"
        );
    }
}
