//! The schema texts of the tools made here, as their server keeps them: packed with LZ4 and
//! shared by every tool whose schema is the same text.
//!
//! Made texts are most of what a large run-time tool set keeps once listed. Many repeat another
//! tool's text byte for byte (the Compute Engine RPCs that return its own `Operation` message,
//! every `GetIamPolicy` and `SetIamPolicy` returning `google.iam.v1.Policy`), and JSON schema
//! text packs well; a listing unpacks it again far faster than it parses it into the JSON tree
//! that rmcp's `Tool` holds anyway. The figures on googleapis are in docs/benchmark-history.md.

use std::{
    borrow::Cow,
    collections::HashSet,
    sync::{Arc, Mutex},
};

use tonic_mcp::KeptText;

/// A text, compressed with LZ4 when that makes it smaller.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) enum Packed {
    /// A text that LZ4 does not shrink (a small schema).
    Plain(Box<str>),
    /// An LZ4 block and the length of the text it holds.
    Lz4 { block: Box<[u8]>, len: usize },
}

impl Packed {
    fn new(text: &str) -> Packed {
        let block = lz4_flex::block::compress(text.as_bytes());
        if block.len() < text.len() {
            Packed::Lz4 {
                block: block.into_boxed_slice(),
                len: text.len(),
            }
        } else {
            Packed::Plain(text.into())
        }
    }
}

impl KeptText for Packed {
    fn text(&self) -> Result<Cow<'_, str>, String> {
        match self {
            Packed::Plain(text) => Ok(Cow::Borrowed(text)),
            Packed::Lz4 { block, len } => lz4_flex::block::decompress(block, *len)
                .map_err(|e| e.to_string())
                .and_then(|bytes| String::from_utf8(bytes).map_err(|e| e.to_string()))
                .map(Cow::Owned)
                .map_err(|e| format!("a kept schema text does not unpack: {e}")),
        }
    }
}

/// The schema texts that tools made at run time keep, each packed once (LZ4): a text packed
/// again, for another tool, is the one packed first. Share one among the tools made from one
/// set of descriptors ([`MadeSchemas::made`](tonic_mcp::MadeSchemas::made)); the tools keep
/// their texts when it is dropped.
#[derive(Debug, Default)]
pub(crate) struct SchemaTexts {
    packed: Mutex<HashSet<Arc<Packed>>>,
}

impl SchemaTexts {
    /// `text` packed, or the equal text packed before. LZ4 is deterministic, so equal texts
    /// pack to equal blocks and are told apart without unpacking anything.
    pub(crate) fn pack(&self, text: &str) -> Arc<Packed> {
        let packed = Packed::new(text);
        // A poisoned lock only means another thread panicked mid-insert; the set is intact.
        let mut set = self
            .packed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match set.get(&packed) {
            Some(shared) => Arc::clone(shared),
            None => {
                let shared = Arc::new(packed);
                set.insert(Arc::clone(&shared));
                shared
            }
        }
    }

    /// `text` packed as [`pack`](Self::pack) packs it, for [`MadeSchemas::made`](tonic_mcp::MadeSchemas::made).
    pub(crate) fn keep(&self, text: &str) -> Arc<dyn KeptText> {
        self.pack(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(properties: usize) -> String {
        let fields: Vec<String> = (0..properties)
            .map(|i| {
                format!(r#""field_{i}":{{"type":"string","description":"Field number {i}."}}"#)
            })
            .collect();
        format!(
            r#"{{"type":"object","properties":{{{}}}}}"#,
            fields.join(",")
        )
    }

    #[test]
    fn a_packed_text_unpacks_to_itself() {
        let texts = SchemaTexts::default();
        for text in [
            schema(0),
            schema(1),
            schema(40),
            "{}".to_owned(),
            "{\"é\":1}".to_owned(),
        ] {
            let packed = texts.keep(&text);
            assert_eq!(packed.text().unwrap(), text);
        }
    }

    #[test]
    fn a_large_text_is_compressed_and_a_small_one_kept_plain() {
        let texts = SchemaTexts::default();
        let large = schema(40);
        match &*texts.pack(&large) {
            Packed::Lz4 { block, len } => {
                assert_eq!(*len, large.len());
                assert!(
                    block.len() * 3 < large.len(),
                    "{} of {}",
                    block.len(),
                    large.len()
                );
            }
            Packed::Plain(_) => panic!("a 40-property schema is compressed"),
        }
        assert_eq!(*texts.pack("{}"), Packed::Plain("{}".into()));
    }

    #[test]
    fn equal_texts_share_one_packing_and_different_ones_do_not() {
        let texts = SchemaTexts::default();
        let shared = Arc::<Packed>::ptr_eq;
        let first = texts.pack(&schema(20));
        let again = texts.pack(&schema(20));
        let other = texts.pack(&schema(21));
        assert!(shared(&first, &again));
        assert!(!shared(&first, &other));
        assert_eq!(texts.packed.lock().unwrap().len(), 2);
        assert_eq!(other.text().unwrap(), schema(21));
    }
}
