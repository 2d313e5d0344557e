//! Rust literal source for big values: byte strings and raw strings written as text, without
//! going through proc-macro2 per byte.

/// `bytes` as the source of a byte string literal, exactly as `proc_macro2::Literal::byte_string`
/// writes it (a test checks), without its per-byte `String` pushes: the descriptor set of a
/// big package is hundreds of kilobytes.
pub(super) fn byte_string(bytes: &[u8]) -> String {
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

/// `text` as the source of a raw string literal.
pub(super) fn raw_string(text: &str) -> String {
    let mut hashes = String::from("#");
    while text.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{text}\"{hashes}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Literal;

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
                byte_string(&bytes),
                Literal::byte_string(&bytes).to_string(),
                "{bytes:?}"
            );
        }
    }
}
