//! The string patterns of the input schema that the text encoder checks by hand, each exactly
//! as the validator reads its regular expression (the tests hold them to it).

/// The patterns the schema generator writes for a Duration and a FieldMask, checked by hand
/// exactly as the regular expressions read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextPattern {
    /// `^-?[0-9]+(\.[0-9]{1,9})?s$`
    Duration,
    /// `^([A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*(,[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*)*)?$`
    FieldMask,
}

pub(super) const DURATION_PATTERN: &str = r"^-?[0-9]+(\.[0-9]{1,9})?s$";
pub(super) const FIELD_MASK_PATTERN: &str = r"^([A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*(,[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*)*)?$";

impl TextPattern {
    pub(super) fn matches(self, text: &str) -> bool {
        match self {
            TextPattern::Duration => {
                let Some(number) = text.strip_suffix('s') else {
                    return false;
                };
                let number = number.strip_prefix('-').unwrap_or(number);
                let (whole, fraction) = match number.split_once('.') {
                    Some((whole, fraction)) => (whole, Some(fraction)),
                    None => (number, None),
                };
                let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
                !whole.is_empty()
                    && digits(whole)
                    && fraction.is_none_or(|f| (1..=9).contains(&f.len()) && digits(f))
            }
            TextPattern::FieldMask => {
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

/// The two digit patterns the schema generator writes for 64-bit integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Digits {
    Signed,
    Unsigned,
}

impl Digits {
    pub(super) fn matches(self, text: &str) -> bool {
        let digits = match self {
            Digits::Signed => text.strip_prefix('-').unwrap_or(text),
            Digits::Unsigned => text,
        };
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The text encoder takes `format` for an annotation: so must the validator it stands in
    /// for.
    #[test]
    fn the_validator_does_not_check_formats() {
        let schema = json!({"type": "object", "properties": {
            "t": {"type": "string", "format": "date-time"},
            "n": {"type": "integer", "format": "int32"},
            "e": {"type": "string", "format": "email"},
        }});
        let validator = crate::validate::compile(&schema).expect("compiles");
        assert!(validator.is_valid(&json!({"t": "not a time", "n": 4_294_967_296_i64, "e": "x"})));
    }

    /// Each pattern checked by hand reads as the validator reads its regular expression.
    #[test]
    fn the_patterns_read_as_the_regular_expressions() {
        let texts = [
            "",
            "0",
            "-0",
            "007",
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
        ];
        type ByHand<'a> = &'a dyn Fn(&str) -> bool;
        let cases: [(&str, ByHand<'_>); 4] = [
            (DURATION_PATTERN, &|t| TextPattern::Duration.matches(t)),
            (FIELD_MASK_PATTERN, &|t| TextPattern::FieldMask.matches(t)),
            ("^-?[0-9]+$", &|t| Digits::Signed.matches(t)),
            ("^[0-9]+$", &|t| Digits::Unsigned.matches(t)),
        ];
        for (pattern, by_hand) in cases {
            let validator =
                crate::validate::compile(&json!({"type": "string", "pattern": pattern}))
                    .expect("compiles");
            for text in texts {
                assert_eq!(
                    by_hand(text),
                    validator.is_valid(&json!(text)),
                    "{pattern} on {text:?}"
                );
            }
        }
    }
}
