//! Proto comments, indexed once by file and source path, cleaned for use as descriptions.
//!
//! A description is the leading comment, or the trailing one where there is no leading comment.
//! Detached comments are never used. Lines that are tool directives (`buf:lint:ignore …`,
//! `@ignore-comment`, `protolint:…`) are dropped, and the common indentation is removed.

use foldhash::HashMap;

use prost_reflect::DescriptorPool;
use prost_types::SourceCodeInfo;

/// Comments of every element of the files in a pool, by file name and source path.
#[derive(Debug, Default, Clone)]
pub struct Comments {
    /// File name → source path → cleaned comment. Nested so that a lookup allocates nothing.
    by_file: HashMap<String, HashMap<Vec<i32>, String>>,
}

impl Comments {
    /// Indexes the source info of every file in the pool (files without source info add nothing).
    pub fn index(pool: &DescriptorPool) -> Comments {
        let mut comments = Comments::default();
        for file in pool.files() {
            if let Some(info) = &file.file_descriptor_proto().source_code_info {
                comments.add_file(file.name(), info);
            }
        }
        comments
    }

    /// Indexes the source info of one file. For callers that keep source info out of their
    /// pool (it is most of a big request, and a pool holds it twice).
    pub fn add_file(&mut self, file: &str, info: &SourceCodeInfo) {
        self.add_locations(
            file,
            info.location.iter().map(|location| {
                (
                    location.path.as_slice(),
                    location.leading_comments.as_deref(),
                    location.trailing_comments.as_deref(),
                )
            }),
        );
    }

    /// Indexes one file's source locations given as (path, leading comments, trailing
    /// comments), for callers that decode source info in their own form.
    pub fn add_locations<'l>(
        &mut self,
        file: &str,
        locations: impl IntoIterator<Item = (&'l [i32], Option<&'l str>, Option<&'l str>)>,
    ) {
        let by_path = self.by_file.entry(file.to_owned()).or_default();
        for (path, leading, trailing) in locations {
            let text = leading
                .map(clean)
                .filter(|text| !text.is_empty())
                .or_else(|| trailing.map(clean).filter(|text| !text.is_empty()));
            if let Some(text) = text {
                by_path.insert(path.to_vec(), text);
            }
        }
    }

    /// The cleaned comment of the element at `path` in `file`, if it has one.
    pub fn get(&self, file: &str, path: &[i32]) -> Option<&str> {
        self.by_file
            .get(file)
            .and_then(|by_path| by_path.get(path))
            .map(String::as_str)
    }
}

/// Whether a comment line is a directive for some tool rather than prose.
fn is_directive(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("buf:lint:")
        || line.starts_with("@ignore-comment")
        || line.starts_with("protolint:")
        || line.starts_with("nolint")
}

/// Drops directive lines, removes common indentation and surrounding blank lines.
pub fn clean(raw: &str) -> String {
    let lines: Vec<&str> = raw
        .lines()
        .map(str::trim_end)
        .filter(|line| !is_directive(line))
        .collect();
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or("").trim_end())
        .collect();
    let start = body
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(body.len());
    let end = body
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    body[start..end].join("\n")
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn cleaning() {
        let cases = [
            (" Fetch one item.\n", "Fetch one item."),
            (
                " First line.\n   indented more\n Last.\n",
                "First line.\n  indented more\nLast.",
            ),
            (
                " buf:lint:ignore RPC_REQUEST_STANDARD_NAME\n Real text.\n",
                "Real text.",
            ),
            ("\n\n Text\n\n", "Text"),
            (" @ignore-comment internal\n", ""),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(clean(input), expected, "{input:?}");
        }
    }
}
