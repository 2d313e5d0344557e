//! Proto comments, indexed once by file and source path, cleaned for use as descriptions.
//!
//! A description is the leading comment, or the trailing one where there is no leading comment.
//! Detached comments are never used. Lines that are tool directives (`buf:lint:ignore …`,
//! `@ignore-comment`, `protolint:…`) are dropped, and the common indentation is removed.

use std::ops::Range;

use foldhash::HashMap;

use prost_reflect::DescriptorPool;
use prost_types::SourceCodeInfo;

/// Comments of every element of the files in a pool, by file name and source path.
#[derive(Debug, Default, Clone)]
pub struct Comments {
    /// File name → the file's comments.
    by_file: HashMap<String, FileComments>,
}

/// One file's cleaned comments, packed in the order of their paths and looked up by binary
/// search: a large set has a great many comments, and a path and a text allocated apiece,
/// beside a hash-table entry, take far more memory than the texts (BENCHMARKS.md measures
/// both on googleapis).
#[derive(Debug, Default, Clone)]
struct FileComments {
    /// Every comment's source path, one after another.
    paths: Box<[i32]>,
    /// Every comment's text, one after another.
    texts: Box<str>,
    /// Where each comment's path ends in `paths` and its text in `texts`.
    ends: Box<[(usize, usize)]>,
}

impl FileComments {
    /// `comments`, in the order of their paths, one a path, packed.
    fn pack(comments: &[(&[i32], &str)]) -> Self {
        let mut paths = Vec::with_capacity(comments.iter().map(|(path, _)| path.len()).sum());
        let mut texts = String::with_capacity(comments.iter().map(|(_, text)| text.len()).sum());
        let mut ends = Vec::with_capacity(comments.len());
        for (path, text) in comments {
            paths.extend_from_slice(path);
            texts.push_str(text);
            ends.push((paths.len(), texts.len()));
        }
        Self {
            paths: paths.into_boxed_slice(),
            texts: texts.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    /// The path and text of comment `at` (below `ends.len()`).
    fn comment(&self, at: usize) -> (&[i32], &str) {
        let (path_start, text_start) = at.checked_sub(1).map_or((0, 0), |before| self.ends[before]);
        let (path_end, text_end) = self.ends[at];
        (
            &self.paths[path_start..path_end],
            &self.texts[text_start..text_end],
        )
    }

    /// The comment at `path`, if there is one.
    fn get(&self, path: &[i32]) -> Option<&str> {
        // The first comment whose path is not below `path`.
        let (mut low, mut high) = (0, self.ends.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if self.comment(middle).0 < path {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        let (found, text) = (low < self.ends.len()).then(|| self.comment(low))?;
        (found == path).then_some(text)
    }
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
    /// comments), for callers that decode source info in their own form. A location's
    /// comment is its leading one cleaned, or else its trailing one; of two locations with one
    /// path, the later's comment is kept. A file indexed again keeps what it had, but for the
    /// paths given again.
    pub fn add_locations<'l>(
        &mut self,
        file: &str,
        locations: impl IntoIterator<Item = (&'l [i32], Option<&'l str>, Option<&'l str>)>,
    ) {
        // The cleaned texts one after another, and each comment's path and text in them.
        let mut texts = String::new();
        let mut found: Vec<(&[i32], Range<usize>)> = Vec::new();
        for (path, leading, trailing) in locations {
            let start = texts.len();
            for raw in [leading, trailing].into_iter().flatten() {
                clean_into(raw, &mut texts);
                if texts.len() > start {
                    found.push((path, start..texts.len()));
                    break;
                }
            }
        }
        if found.is_empty() {
            return;
        }
        let known = self.by_file.entry(file.to_owned()).or_default();
        let mut all: Vec<(&[i32], &str)> = (0..known.ends.len())
            .map(|at| known.comment(at))
            .chain(
                found
                    .iter()
                    .map(|(path, text)| (*path, &texts[text.clone()])),
            )
            .collect();
        // Latest first, and a stable sort keeps it first among the comments at its path.
        all.reverse();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all.dedup_by(|later_in_list, kept| later_in_list.0 == kept.0);
        *known = FileComments::pack(&all);
    }

    /// The cleaned comment of the element at `path` in `file`, if it has one.
    pub fn get(&self, file: &str, path: &[i32]) -> Option<&str> {
        self.by_file.get(file)?.get(path)
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
    let mut text = String::new();
    clean_into(raw, &mut text);
    text
}

/// [`clean`], appending the text to `out`.
fn clean_into(raw: &str, out: &mut String) {
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
    for (at, line) in body[start..end].iter().enumerate() {
        if at > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
}

#[cfg(test)]
mod tests {
    use super::{Comments, clean};

    #[test]
    fn a_comment_is_found_by_file_and_path_and_the_later_of_two_is_kept() {
        let mut comments = Comments::default();
        comments.add_locations(
            "a.proto",
            [
                (&[4, 0][..], Some(" First.\n"), None),
                (&[4, 1][..], None, Some(" Trailing.\n")),
                (&[4, 0][..], Some(" Again.\n"), None),
                (&[4, 2][..], Some(" Kept.\n"), None),
                (&[4, 2][..], None, None),
                (&[4][..], Some(" \n"), None),
            ],
        );
        assert_eq!(comments.get("a.proto", &[4, 0]), Some("Again."));
        assert_eq!(comments.get("a.proto", &[4, 1]), Some("Trailing."));
        // A later location without a comment leaves the earlier one's.
        assert_eq!(comments.get("a.proto", &[4, 2]), Some("Kept."));
        // The same file indexed again adds to what it had, replacing what it gives again.
        comments.add_locations(
            "a.proto",
            [
                (&[4, 1][..], Some(" Replaced.\n"), None),
                (&[2][..], Some(" Package.\n"), None),
            ],
        );
        comments.add_locations("a.proto", []);
        comments.add_locations("b.proto", [(&[4, 0][..], Some(" B.\n"), None)]);
        let expected: [(&[i32], Option<&str>); 9] = [
            (&[], None),
            (&[2], Some("Package.")),
            (&[4], None),
            (&[4, 0], Some("Again.")),
            (&[4, 0, 0], None),
            (&[4, 1], Some("Replaced.")),
            (&[4, 2], Some("Kept.")),
            (&[4, 3], None),
            (&[5], None),
        ];
        for (path, comment) in expected {
            assert_eq!(comments.get("a.proto", path), comment, "{path:?}");
        }
        assert_eq!(comments.get("b.proto", &[4, 0]), Some("B."));
        assert_eq!(comments.get("c.proto", &[4, 0]), None);
    }

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
