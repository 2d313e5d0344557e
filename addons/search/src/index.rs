//! The search index of tool search: BM25 over weighted fields of each tool.
//!
//! A tool is a document of words from, by weight: its name split into words (3), its title, its
//! RPC's service and method names and their joined neighbours (`keyring` for `KeyRing`) (2), its
//! package (1.5), its description (the proto comment, without the notes on streaming and
//! long-running calls that many tools share) and the names of its request's fields (1), and its
//! response's field names (0.5). Words are lower-cased, split at case changes and
//! non-alphanumerics, reduced by a light suffix stemmer (`keys` → `key`, `instances` and
//! `instance` → `instanc`, `rotating` → `rotat`… the same for queries and documents) and
//! common words map to one
//! (`remove`, `erase` and `drop` are `delete`; `all` and `every` are `list`); a query also
//! looks, at half weight, for the words APIs use for some that users say (`vm` → `instance`,
//! `transcribe` → `recognize`). Scores are Okapi BM25 (k1 1.2, b 0.5) with the weighted term
//! frequencies, plus a bonus for how much of the RPC's own name (its service and method words)
//! the query says: [`NAME_COVERAGE`] times the square of the share covered, so that "compute
//! instance create" puts `Instances/Insert` above `InstanceGroups/AddInstances`. Ties go to the
//! stable version of an API (`v1` before `v1beta1`).

use std::collections::HashMap;

const K1: f32 = 1.2;
const B: f32 = 0.5;
/// The bonus for a query that says every word of an RPC's service and method names (less for
/// part of them, by the square of the share). Chosen on half of the evaluation set
/// (docs/benchmark-history.md, tool search): 8 to 24 all did better than none, on both halves.
const NAME_COVERAGE: f32 = 16.0;

/// One searchable tool.
pub(crate) struct Document {
    /// The words, each with its field's weight.
    pub(crate) words: Vec<(String, f32)>,
    /// Whether the RPC's package carries no pre-release version (`alpha`, `beta`).
    pub(crate) stable: bool,
    /// The words of the RPC's service and method names, each once.
    pub(crate) name: Vec<String>,
}

/// Words of tools, for ranking by a query.
pub(crate) struct Index {
    /// Per word: the documents that have it, with its weighted frequency there.
    postings: HashMap<Box<str>, Vec<(u32, f32)>>,
    /// Weighted length of each document.
    lengths: Vec<f32>,
    average: f32,
    stable: Vec<bool>,
    /// Per word: the documents whose service or method name has it.
    name_postings: HashMap<Box<str>, Vec<u32>>,
    /// How many different words each document's service and method names have.
    name_lengths: Vec<u16>,
}

impl Index {
    pub(crate) fn new(documents: &[Document]) -> Index {
        let mut postings: HashMap<Box<str>, Vec<(u32, f32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(documents.len());
        let mut stable = Vec::with_capacity(documents.len());
        let mut name_postings: HashMap<Box<str>, Vec<u32>> = HashMap::new();
        let mut name_lengths = Vec::with_capacity(documents.len());
        let mut frequencies: HashMap<&str, f32> = HashMap::new();
        for (id, document) in documents.iter().enumerate() {
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            frequencies.clear();
            let mut length = 0.0;
            for (word, weight) in &document.words {
                *frequencies.entry(word.as_str()).or_default() += weight;
                length += weight;
            }
            for (word, frequency) in &frequencies {
                postings
                    .entry(Box::from(*word))
                    .or_default()
                    .push((id, *frequency));
            }
            lengths.push(length);
            stable.push(document.stable);
            for word in &document.name {
                name_postings
                    .entry(Box::from(word.as_str()))
                    .or_default()
                    .push(id);
            }
            name_lengths.push(u16::try_from(document.name.len()).unwrap_or(u16::MAX));
        }
        let average = if lengths.is_empty() {
            1.0
        } else {
            (lengths.iter().sum::<f32>() / lengths.len() as f32).max(1.0)
        };
        postings.shrink_to_fit();
        name_postings.shrink_to_fit();
        Index {
            postings,
            lengths,
            average,
            stable,
            name_postings,
            name_lengths,
        }
    }

    /// The documents that match `query`, best first, with their scores; `keep` says which
    /// documents the filters let through.
    pub(crate) fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(usize) -> bool,
    ) -> (Vec<(usize, f32)>, usize) {
        let count = self.lengths.len() as f32;
        let mut scores = vec![0.0_f32; self.lengths.len()];
        let terms = query_terms(query);
        let mut named = vec![0_u16; self.lengths.len()];
        for (term, _) in terms.iter().filter(|(_, weight)| *weight >= 1.0) {
            for id in self.name_postings.get(term.as_str()).into_iter().flatten() {
                named[*id as usize] += 1;
            }
        }
        for (term, weight) in terms {
            let Some(posting) = self.postings.get(term.as_str()) else {
                continue;
            };
            let frequency = posting.len() as f32;
            let idf = (1.0 + (count - frequency + 0.5) / (frequency + 0.5)).ln();
            for (id, tf) in posting {
                let id = *id as usize;
                let norm = K1 * (1.0 - B + B * self.lengths[id] / self.average);
                scores[id] += weight * idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        for (id, said) in named.iter().enumerate().filter(|(_, said)| **said > 0) {
            let share = f32::from(*said) / f32::from(self.name_lengths[id].max(1));
            scores[id] += NAME_COVERAGE * share * share;
        }
        let mut hits: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|(id, score)| *score > 0.0 && keep(*id))
            .collect();
        let total = hits.len();
        let order = |a: &(usize, f32), b: &(usize, f32)| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.stable[b.0].cmp(&self.stable[a.0]))
                .then_with(|| a.0.cmp(&b.0))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        (hits, total)
    }
}

/// The actions a request can begin with (as [`words`] keeps them: `remove`, `add`, `edit`…
/// are among them), each with the other words of RPC names that do it: a request that begins
/// with one is matched only by a tool whose service or method name says it.
const ACTIONS: &[(&str, &[&str])] = &[
    (
        "create",
        &[
            "generate", "allocate", "import", "upload", "copy", "clone", "build", "deploy",
            "publish", "write", "start", "run", "submit",
        ],
    ),
    (
        "delete",
        &["clear", "undeploy", "revoke", "disable", "cancel", "stop"],
    ),
    (
        "update",
        &[
            "set", "replace", "rename", "move", "enable", "disable", "patch", "modify", "write",
            "apply", "resize", "upgrade",
        ],
    ),
];

/// What a request asks for when it begins with an action ([`Index::action`]).
pub(crate) struct Action {
    /// The words of RPC names that do it.
    names: Vec<String>,
    /// The request's other words, each with the words an API would use for it.
    rest: Vec<Vec<String>>,
}

impl Index {
    /// What `query` asks for when its first word is one of [`ACTIONS`] ("delete a book",
    /// "remove the old snapshots"); `None` otherwise.
    pub(crate) fn action(query: &str) -> Option<Action> {
        let mut words = words(query);
        let first = words.first()?.clone();
        let (_, others) = ACTIONS.iter().find(|(action, _)| *action == first)?;
        let mut names: Vec<String> = others.iter().map(|word| canonical(&stem(word))).collect();
        names.push(first);
        words.remove(0);
        words.sort_unstable();
        words.dedup();
        let rest = words
            .into_iter()
            .map(|word| {
                let mut said = related(&word);
                said.push(word);
                said
            })
            .collect();
        Some(Action { names, rest })
    }

    /// Whether document `id` does `action` (its name says it) to what the request's other
    /// words name (it has one of them, or the request has no other word).
    pub(crate) fn does(&self, id: usize, action: &Action) -> bool {
        action.names.iter().any(|word| self.names(id, word))
            && (action.rest.is_empty()
                || action.rest.iter().flatten().any(|word| self.has(id, word)))
    }

    /// Whether document `id` has the word `word` anywhere.
    pub(crate) fn has(&self, id: usize, word: &str) -> bool {
        let Ok(id) = u32::try_from(id) else {
            return false;
        };
        self.postings
            .get(word)
            .is_some_and(|posting| posting.binary_search_by_key(&id, |(id, _)| *id).is_ok())
    }

    /// Whether the service or method name of document `id` has the word `word`.
    pub(crate) fn names(&self, id: usize, word: &str) -> bool {
        let Ok(id) = u32::try_from(id) else {
            return false;
        };
        self.name_postings
            .get(word)
            .is_some_and(|ids| ids.binary_search(&id).is_ok())
    }
}

/// The terms of a query with their weights: its words (1), and the words an API would use for
/// what a user says ([`RELATED`], 0.5 each), each term once at its highest weight.
fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut terms: Vec<(String, f32)> = Vec::new();
    // Where each term is in `terms`, so that a long query is read in one pass.
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut add = |term: String, weight: f32| match at.get(&term) {
        Some(&i) => terms[i].1 = terms[i].1.max(weight),
        None => {
            at.insert(term.clone(), terms.len());
            terms.push((term, weight));
        }
    };
    for word in words(query) {
        for term in related(&word) {
            add(term, 0.5);
        }
        add(word, 1.0);
    }
    terms
}

/// The words an API would use for `word` ([`RELATED`]), as [`words`] keeps them.
fn related(word: &str) -> Vec<String> {
    RELATED
        .iter()
        .find(|(said, _)| canonical(&stem(said)) == word)
        .map(|(_, related)| related.iter().map(|term| canonical(&stem(term))).collect())
        .unwrap_or_default()
}

/// What users say (compared as [`words`] keeps it), and the words APIs use for it.
const RELATED: &[(&str, &[&str])] = &[
    ("vm", &["instance", "machine"]),
    ("machine", &["instance"]),
    ("server", &["instance"]),
    ("access", &["iam", "policy", "permission"]),
    ("permission", &["iam", "policy"]),
    ("transcribe", &["recognize", "speech"]),
    ("transcript", &["recognize", "speech"]),
    ("download", &["read", "get"]),
    ("upload", &["write", "create"]),
    ("spin", &["create", "start"]),
    ("restore", &["undelete", "restore"]),
    ("undelete", &["restore", "undelete"]),
    ("recover", &["restore", "undelete"]),
    ("photo", &["image"]),
    ("picture", &["image"]),
    ("file", &["object"]),
    ("password", &["secret"]),
    ("cost", &["billing", "budget"]),
    ("spend", &["billing", "budget"]),
    ("bill", &["billing"]),
    ("schedule", &["job", "cron"]),
    ("log", &["entry"]),
    ("bot", &["agent"]),
    ("chatbot", &["agent"]),
    ("deploy", &["release", "rollout"]),
    ("rename", &["update"]),
    ("resize", &["update"]),
    ("scale", &["update", "resize"]),
];

/// Words of `text` as the index keeps them: split, lower-cased, stemmed, verbs mapped, stop
/// words left out.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in split(text) {
        let lower = piece.to_lowercase();
        if STOP_WORDS.contains(&lower.as_str()) {
            continue;
        }
        out.push(canonical(&stem(&lower)));
    }
    out
}

/// Each two neighbouring words of a name joined (`CreateKeyRing`: `createkey`, `keyring`),
/// stemmed and mapped as [`words`] does: users write some of an API's compounds as one word.
pub(crate) fn joined_words(name: &str) -> Vec<String> {
    let pieces: Vec<String> = split(name)
        .into_iter()
        .map(str::to_lowercase)
        .filter(|piece| !STOP_WORDS.contains(&piece.as_str()))
        .collect();
    pieces
        .windows(2)
        .map(|pair| canonical(&stem(&format!("{}{}", pair[0], pair[1]))))
        .collect()
}

/// Alphanumeric runs, cut again where lower case turns upper (`KeyRing` → `Key`, `Ring`) and
/// where an upper-case run meets a word (`IAMPolicy` → `IAM`, `Policy`).
fn split(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<(usize, char)> = run.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let previous = chars[i - 1].1;
            let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
            let boundary = (previous.is_lowercase() && c.is_uppercase())
                || (previous.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                pieces.push(&run[start..at]);
                start = at;
            }
        }
        if start < run.len() {
            pieces.push(&run[start..]);
        }
    }
    pieces.retain(|piece| !piece.is_empty());
    pieces
}

/// A light suffix stemmer: plurals and the common verb endings, and a final `e`, so that a word
/// and its plural meet (`instance` and `instances` are both `instanc`, `image` and `images`
/// `imag`; `rotate` and `rotating` `rotat`).
fn stem(word: &str) -> String {
    let n = word.len();
    if !word.is_ascii() || n <= 3 {
        return word.to_owned();
    }
    let stem = [
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("es", "", 6),
        ("s", "", 4),
    ]
    .into_iter()
    .find(|(suffix, _, min)| {
        n >= *min
            && word.ends_with(suffix)
            && !(*suffix == "s" && (word.ends_with("ss") || word.ends_with("us")))
    })
    .map_or_else(
        || word.to_owned(),
        |(suffix, replacement, _)| format!("{}{replacement}", &word[..n - suffix.len()]),
    );
    match stem.strip_suffix('e') {
        Some(shorter) if shorter.len() >= 4 => shorter.to_owned(),
        _ => stem,
    }
}

/// One word for the verbs and nouns that users and APIs say differently.
fn canonical(word: &str) -> String {
    let mapped = match word {
        "remov" | "eras" | "drop" | "destroy" | "purg" | "delet" => "delete",
        "make" | "mak" | "add" | "new" | "creat" | "insert" | "register" | "provision" => "create",
        "chang" | "modify" | "modifi" | "edit" | "updat" | "patch" | "alter" => "update",
        "fetch" | "read" | "retriev" | "look" | "lookup" => "get",
        // "all items", "every task": a listing.
        "enumerat" | "brows" | "all" | "every" | "each" => "list",
        "find" | "query" | "queri" => "search",
        "begin" | "launch" => "start",
        "halt" | "terminat" => "stop",
        other => other,
    };
    mapped.to_owned()
}

/// Words too common in requests to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "from", "with", "and", "or", "my",
    "me", "i", "we", "our", "us", "you", "your", "is", "are", "be", "it", "its", "this", "that",
    "these", "those", "what", "which", "who", "how", "do", "does", "can", "could", "please",
    "want", "need", "some", "any", "there", "here", "into", "about", "as", "if", "so", "just",
    "will", "would", "should", "i'd", "let", "lets",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn document(rpc: &str, text: &str) -> Document {
        let (service, method) = rpc
            .trim_start_matches('/')
            .split_once('/')
            .unwrap_or_default();
        let mut name = words(service.rsplit('.').next().unwrap_or_default());
        name.extend(words(method));
        name.sort_unstable();
        name.dedup();
        Document {
            words: words(text).into_iter().map(|w| (w, 1.0)).collect(),
            stable: !rpc.contains("beta"),
            name,
        }
    }

    #[test]
    fn words_are_split_stemmed_and_mapped() {
        assert_eq!(
            words("CreateKeyRing IAMPolicy keys removing the_files v1beta1"),
            [
                "create", "key", "ring", "iam", "policy", "key", "delete", "file", "v1beta1"
            ]
        );
    }

    #[test]
    fn a_word_and_its_plural_are_one_word() {
        for (one, many) in [
            ("instance", "instances"),
            ("image", "images"),
            ("database", "databases"),
            ("policy", "policies"),
            ("rotate", "rotating"),
            ("note", "notes"),
        ] {
            assert_eq!(words(one), words(many), "{one} / {many}");
        }
        assert_eq!(words("purge browse"), ["delete", "list"]);
    }

    #[test]
    fn the_best_match_comes_first_and_stable_versions_win_ties() {
        let documents = [
            document(
                "/x.v1beta1.S/DeleteKeyRing",
                "DeleteKeyRing delete a key ring",
            ),
            document("/x.v1.S/DeleteKeyRing", "DeleteKeyRing delete a key ring"),
            document("/x.v1.S/ListBuckets", "ListBuckets list the buckets"),
        ];
        let index = Index::new(&documents);
        let (hits, total) = index.search("remove my keyring ring", 10, |_| true);
        assert_eq!(total, 2);
        assert_eq!(hits[0].0, 1, "{hits:?}");
        assert_eq!(hits[1].0, 0, "{hits:?}");
        let (hits, _) = index.search("show me all buckets", 1, |_| true);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 2);
        let (hits, total) = index.search("buckets", 10, |id| id != 2);
        assert!(hits.is_empty() && total == 0);
    }

    #[test]
    fn a_query_that_says_the_whole_rpc_name_puts_that_rpc_first() {
        let documents = [
            document(
                "/x.v1.InstanceGroups/AddInstances",
                "InstanceGroups AddInstances adds instances to an instance group of instances",
            ),
            document(
                "/x.v1.Instances/Insert",
                "Instances Insert creates a resource",
            ),
        ];
        let index = Index::new(&documents);
        // Without the name bonus the group's many `instance` words win.
        let (hits, _) = index.search("compute instance create", 2, |_| true);
        assert_eq!(hits[0].0, 1, "{hits:?}");
        // Half the group's name (`instance`, not `group`) earns it a quarter of the bonus.
        let (hits, _) = index.search("instance group", 2, |_| true);
        assert_eq!(hits[0].0, 0, "{hits:?}");
    }

    #[test]
    fn an_action_matches_only_a_tool_that_does_it_to_what_the_query_names() {
        let documents = [
            document("/x.v1.Books/GetBook", "GetBook get a book"),
            document(
                "/x.v1.Products/DeleteProduct",
                "DeleteProduct delete a product",
            ),
            document(
                "/x.v1.Instances/DeleteInstance",
                "DeleteInstance delete an instance",
            ),
            document(
                "/x.v1.Buckets/SetLabels",
                "SetLabels set the labels of a bucket",
            ),
        ];
        let index = Index::new(&documents);
        let action = Index::action("remove a book").expect("an action");
        assert!((0..4).all(|id| !index.does(id, &action)));
        // What users say is looked up in the words APIs use (`vm`: `instance`).
        let action = Index::action("remove the vm").expect("an action");
        assert!(index.does(2, &action));
        assert!(!index.does(1, &action));
        // Names that do an action in other words (`Set…` updates).
        let action = Index::action("change the labels on my bucket").expect("an action");
        assert!(index.does(3, &action));
        // Only a request that begins with an action asks it of names.
        assert!(Index::action("books about birds").is_none());
        assert!(Index::action("plan routes with 40 stops").is_none());
        assert!(Index::action("read the rows whose keys start with a").is_none());
    }
}
