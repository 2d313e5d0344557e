//! The string patterns the schema generator writes, checked by hand exactly as their regular
//! expressions read (the tests hold each to its expression). The input validator checks these
//! without a regular expression engine, and the encoder checks them as it reads.

use tonic_mcp_schema::json_schema::wkt::{
    DURATION_PATTERN, FIELD_MASK_PATTERN, SIGNED_KEY_PATTERN, SIGNED_PATTERN, UNSIGNED_KEY_PATTERN,
    UNSIGNED_PATTERN,
};

/// One of the patterns the schema generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KnownPattern {
    /// `^-?[0-9]+$`: a signed 64-bit integer as a string.
    Signed,
    /// `^[0-9]+$`: an unsigned 64-bit integer as a string.
    Unsigned,
    /// `^-?(0|[1-9][0-9]*)$`: a signed integer map key, in canonical decimal.
    SignedKey,
    /// `^(0|[1-9][0-9]*)$`: an unsigned integer map key, in canonical decimal.
    UnsignedKey,
    /// `^-?[0-9]+(\.[0-9]{1,9})?s$`: a Duration.
    Duration,
    /// `^([A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*(,[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*)*)?$`:
    /// a FieldMask.
    FieldMask,
}

/// `text` without a leading minus sign.
fn unsigned(text: &str) -> &str {
    text.strip_prefix('-').unwrap_or(text)
}

impl KnownPattern {
    /// The known pattern written as `pattern`, if it is one.
    pub(crate) fn of(pattern: &str) -> Option<Self> {
        Some(match pattern {
            SIGNED_PATTERN => Self::Signed,
            UNSIGNED_PATTERN => Self::Unsigned,
            SIGNED_KEY_PATTERN => Self::SignedKey,
            UNSIGNED_KEY_PATTERN => Self::UnsignedKey,
            DURATION_PATTERN => Self::Duration,
            FIELD_MASK_PATTERN => Self::FieldMask,
            _ => return None,
        })
    }

    /// Whether `text` matches, as the regular expression reads.
    pub(crate) fn matches(self, text: &str) -> bool {
        let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        let canonical = |part: &str| digits(part) && (part == "0" || !part.starts_with('0'));
        match self {
            Self::Signed => digits(unsigned(text)),
            Self::Unsigned => digits(text),
            Self::SignedKey => canonical(unsigned(text)),
            Self::UnsignedKey => canonical(text),
            Self::Duration => {
                let Some(number) = text.strip_suffix('s') else {
                    return false;
                };
                let (whole, fraction) = match unsigned(number).split_once('.') {
                    Some((whole, fraction)) => (whole, Some(fraction)),
                    None => (unsigned(number), None),
                };
                digits(whole) && fraction.is_none_or(|f| f.len() <= 9 && digits(f))
            }
            Self::FieldMask => {
                let name = |part: &str| {
                    let mut bytes = part.bytes();
                    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
                        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
                };
                text.is_empty() || text.split(',').all(|path| path.split('.').all(name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each pattern checked by hand reads as jsonschema (the reference validator) reads its
    /// regular expression.
    #[test]
    fn the_patterns_read_as_the_regular_expressions() {
        let texts = [
            "",
            "0",
            "-0",
            "00",
            "-00",
            "007",
            "-07",
            "-",
            "+1",
            "1.5",
            "1s",
            "-1s",
            "1.s",
            "1.5s",
            "1.123456789s",
            "1.1234567890s",
            "-12.0s",
            "1e3s",
            "s",
            " 1s",
            "1s ",
            "1s\n",
            "١s",
            "١",
            "a",
            "a.b",
            "a,b",
            "a.b,cD",
            "a..b",
            ".a",
            "a.",
            "a,",
            ",a",
            "1a",
            "_a",
            "a_1",
            "aB.c9",
            "a b",
            "é",
            "a.b,c.d.e",
            "9223372036854775808",
            "-9223372036854775809",
            "12\n",
            "\n12",
        ];
        let patterns = [
            SIGNED_PATTERN,
            UNSIGNED_PATTERN,
            SIGNED_KEY_PATTERN,
            UNSIGNED_KEY_PATTERN,
            DURATION_PATTERN,
            FIELD_MASK_PATTERN,
        ];
        for pattern in patterns {
            let known = KnownPattern::of(pattern).expect("a known pattern");
            let reference = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&json!({"type": "string", "pattern": pattern}))
                .expect("compiles");
            for text in texts {
                assert_eq!(
                    known.matches(text),
                    reference.is_valid(&json!(text)),
                    "{pattern} on {text:?}"
                );
            }
        }
    }
}
