//! What search reads of a tool's texts: its description's proto comment without the
//! generator's notes (indexed) and first sentence (shown), the document embedded for hybrid
//! ranking, and which segments of a package name a version.

/// `description` without the paragraphs the generator adds about how the call behaves
/// (streaming, long-running): every such tool shares their words, and they make its document
/// long, which BM25 counts against it.
pub(crate) fn proto_comment(description: &str) -> String {
    description
        .split("\n\n")
        .filter(|paragraph| {
            !tonic_mcp_schema::tools::BEHAVIOUR_NOTES
                .iter()
                .any(|prefix| paragraph.starts_with(prefix))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first sentence of `description`, at most about 160 characters.
pub(crate) fn summary(description: &str) -> String {
    let first = description.split("\n\n").next().unwrap_or_default();
    let first = first.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = first
        .find(". ")
        .map_or(first.len(), |at| at + 1)
        .min(first.len());
    let mut sentence = first[..end].to_owned();
    if sentence.chars().count() > 160 {
        sentence = sentence.chars().take(157).collect::<String>() + "...";
    }
    sentence
}

/// What is embedded of a tool: the words of its package (without `google`, `cloud` and
/// versions), its service, its title (or method) and the first sentence of its description.
pub(crate) fn semantic_document(
    package: &str,
    service: &str,
    method: &str,
    title: &str,
    description: &str,
) -> String {
    let words: Vec<&str> = package
        .split('.')
        .filter(|word| !matches!(*word, "google" | "cloud") && !is_version(word))
        .collect();
    let name = if title.is_empty() { method } else { title };
    let first = proto_comment(description);
    let first = first.split("\n\n").next().unwrap_or_default();
    let first = first.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = first.find(". ").map_or(first.as_str(), |at| &first[..=at]);
    let sentence: String = sentence.chars().take(300).collect();
    format!("{} {service}: {name}. {sentence}", words.join(" "))
}

/// Whether a package segment names a version (`v1`, `v1beta2`, `v22`, `v1p1beta1`).
pub(crate) fn is_version(segment: &str) -> bool {
    let mut chars = segment.chars();
    chars.next() == Some('v') && chars.next().is_some_and(|c| c.is_ascii_digit())
}
