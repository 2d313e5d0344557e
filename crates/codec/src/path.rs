//! JSON paths for error messages: `$.filter.value`, `$.items[2].name`, `$.labels["a b"]`.

use std::fmt;

/// One step into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A location in the tool arguments, rendered as a JSONPath-like string.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct JsonPath(pub(crate) Vec<Seg>);

impl JsonPath {
    /// Steps into the member `key` of an object.
    pub fn push_key(&mut self, key: &str) {
        self.0.push(Seg::Key(key.to_owned()));
    }

    /// Steps into the item `index` of an array.
    pub fn push_index(&mut self, index: usize) {
        self.0.push(Seg::Index(index));
    }

    /// Steps back out of the last step.
    pub fn pop(&mut self) {
        self.0.pop();
    }

    /// A copy of this path with `key` appended.
    pub fn with_key(&self, key: &str) -> Self {
        let mut path = self.clone();
        path.push_key(key);
        path
    }
}

/// Whether `key` is an identifier (a letter or `_`, then letters, digits and `_`).
pub(crate) fn is_plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for seg in &self.0 {
            match seg {
                Seg::Key(key) if is_plain_key(key) => write!(f, ".{key}")?,
                Seg::Key(key) => write!(f, "[{}]", serde_json::Value::from(key.as_str()))?,
                Seg::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// The most problems reported of one call's arguments; one more says that there are more.
/// Arguments can hold a problem in every few bytes, and a problem's text can quote the schema
/// (the allowed properties, an enum's names): a model acts on the first ones, and the rest
/// would cost time, memory and its context.
pub const MAX_PROBLEMS: usize = 100;

/// One problem found in the arguments: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// Where the problem is.
    pub path: JsonPath,
    /// What is wrong there, worded for a model to act on.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_jsonpath() {
        let mut path = JsonPath::default();
        assert_eq!(path.to_string(), "$");
        path.push_key("items");
        path.push_index(2);
        path.push_key("name");
        assert_eq!(path.to_string(), "$.items[2].name");
        path.push_key("a b");
        assert_eq!(path.to_string(), "$.items[2].name[\"a b\"]");
        path.push_key("7");
        assert_eq!(path.to_string(), "$.items[2].name[\"a b\"][\"7\"]");
    }
}
