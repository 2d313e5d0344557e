//! A tool's schemas as a server keeps them: JSON text, given when the tool is registered (a
//! generated constant, or made with the rest of a run-time tool) or made when first needed (a
//! `tools/list` page, `describe_tools`, the first call), for tool sets of thousands of RPCs.

use std::{
    borrow::Cow,
    fmt,
    sync::{Arc, Mutex, OnceLock},
};

use tonic_mcp_codec::DeepCheck;

use crate::sync::lock;

/// A schema text made at run time, kept as the maker of the tool chose to keep it:
/// `tonic-mcp-dynamic` packs its texts and shares equal ones among its tools; a `String` is
/// kept as it is.
pub trait KeptText: Send + Sync + fmt::Debug {
    /// The text; or why it cannot be given back, which the tool's listing and calls then fail
    /// with.
    ///
    /// # Errors
    ///
    /// The kept form does not give the text back (a packed text that does not unpack).
    fn text(&self) -> Result<Cow<'_, str>, String>;
}

impl KeptText for String {
    fn text(&self) -> Result<Cow<'_, str>, String> {
        Ok(Cow::Borrowed(self))
    }
}

/// A tool schema as JSON text.
#[derive(Debug, Clone)]
enum SchemaText {
    /// A text that lives as long as the program: a generated constant.
    Static(&'static str),
    /// A text made at run time, as its maker keeps it.
    Kept(Arc<dyn KeptText>),
}

impl SchemaText {
    fn text(&self) -> Result<Cow<'_, str>, String> {
        match self {
            SchemaText::Static(text) => Ok(Cow::Borrowed(text)),
            SchemaText::Kept(kept) => kept.text(),
        }
    }
}

/// Makes a tool's schemas when they are first needed: given to
/// [`SpecTool::later`](crate::SpecTool::later), it is run once, on the first `tools/list` page
/// that shows the tool, its `describe_tools` or its first call, and dropped once it has made
/// them (what it reads can then be let go).
pub trait MakeSchemas: Send + Sync {
    /// The input and the output schema, or why they cannot be made, naming the proto element.
    ///
    /// # Errors
    ///
    /// The schemas cannot be made; the tool is then left out of listings and its calls fail
    /// with this message.
    fn make(&self) -> Result<MadeSchemas, String>;
}

/// A tool's schemas as a server keeps them (JSON text), and the check its input needs when the
/// listed input schema was shrunk.
pub struct MadeSchemas {
    input: SchemaText,
    output: SchemaText,
    pub(crate) deep: DeepCheck,
}

impl std::fmt::Debug for MadeSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MadeSchemas")
            .field("input", &self.input)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

impl MadeSchemas {
    /// Schemas given as constants (a generated tool's).
    pub(crate) fn given(input: &'static str, output: &'static str) -> Self {
        Self {
            deep: DeepCheck::new(input),
            input: SchemaText::Static(input),
            output: SchemaText::Static(output),
        }
    }

    /// Schemas made at run time, each a JSON object as text (JSON Schema 2020-12 of the
    /// keywords the schema generator writes), each kept as `keep` keeps it.
    pub fn made(
        input: &str,
        output: &str,
        mut keep: impl FnMut(&str) -> Arc<dyn KeptText>,
    ) -> Self {
        Self {
            deep: DeepCheck::new(input),
            input: SchemaText::Kept(keep(input)),
            output: SchemaText::Kept(keep(output)),
        }
    }

    /// The input schema's text.
    ///
    /// # Errors
    ///
    /// A kept text is not given back ([`KeptText::text`]).
    pub fn input(&self) -> Result<Cow<'_, str>, String> {
        self.input.text()
    }

    /// The output schema's text.
    ///
    /// # Errors
    ///
    /// As for [`input`](Self::input).
    pub fn output(&self) -> Result<Cow<'_, str>, String> {
        self.output.text()
    }
}

/// A tool's schemas: made already, or made once, when first asked for.
pub(crate) struct Schemas {
    made: OnceLock<Result<MadeSchemas, String>>,
    /// `None` for schemas given at registration. A maker is taken out and dropped once it has
    /// made the schemas: what makers read (the descriptors' comments above all) is shared by
    /// every tool of their pool, and it is let go with the last.
    maker: Option<Mutex<Option<Box<dyn MakeSchemas>>>>,
}

impl Schemas {
    /// Schemas given when the tool is registered.
    pub(crate) fn ready(made: MadeSchemas) -> Self {
        Self {
            made: OnceLock::from(Ok(made)),
            maker: None,
        }
    }

    /// Schemas `maker` makes when they are first asked for.
    pub(crate) fn later(maker: Box<dyn MakeSchemas>) -> Self {
        Self {
            made: OnceLock::new(),
            maker: Some(Mutex::new(Some(maker))),
        }
    }

    /// The schemas if they were given as text, for the checks of registration.
    pub(crate) fn given(&self) -> Option<&MadeSchemas> {
        match (&self.maker, self.made.get()) {
            (None, Some(Ok(made))) => Some(made),
            _ => None,
        }
    }

    /// Whether the maker is still kept (it is dropped once it has made the schemas).
    #[cfg(test)]
    pub(crate) fn keeps_maker(&self) -> bool {
        self.maker.as_ref().is_some_and(|slot| lock(slot).is_some())
    }

    /// Whether the schemas are made (or given) already.
    #[cfg(test)]
    pub(crate) fn is_made(&self) -> bool {
        self.made.get().is_some()
    }

    /// The schemas, made now if this is the first time they are asked for; or why they cannot
    /// be made, which is logged once, naming `tool`.
    pub(crate) fn get(&self, tool: &str) -> Result<&MadeSchemas, &str> {
        self.made
            .get_or_init(|| {
                // Only this closure takes the maker, and `OnceLock` runs it once at a time.
                let made = match self.maker.as_ref().map(|slot| lock(slot).take()) {
                    Some(Some(maker)) => maker.make(),
                    // Taken by an earlier attempt that panicked before it set `made`.
                    Some(None) => Err("making them failed before (see the log)".to_owned()),
                    None => Err("the tool has no schemas".to_owned()),
                };
                if let Err(error) = &made {
                    tracing::error!(
                        tool,
                        %error,
                        "the tool's schemas cannot be made: it is left out of listings and its \
                         calls fail"
                    );
                }
                made
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Panics;

    fn kept(text: &str) -> Arc<dyn KeptText> {
        Arc::new(text.to_owned())
    }

    #[test]
    fn a_constant_is_borrowed_and_a_kept_text_given_back() {
        let text = SchemaText::Static(r#"{"type":"object"}"#);
        assert!(matches!(
            text.text(),
            Ok(Cow::Borrowed(r#"{"type":"object"}"#))
        ));
        assert_eq!(SchemaText::Kept(kept("{}")).text().unwrap(), "{}");
    }

    impl MakeSchemas for Panics {
        fn make(&self) -> Result<MadeSchemas, String> {
            panic!("a schema generator bug")
        }
    }

    /// A maker that panicked is not run again: the tool's schemas then fail saying so.
    #[test]
    fn a_maker_that_panicked_is_not_run_again() {
        let schemas = Schemas::later(Box::new(Panics));
        let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = schemas.get("t");
        }));
        assert!(first.is_err());
        assert!(!schemas.keeps_maker());
        assert_eq!(
            schemas.get("t").err(),
            Some("making them failed before (see the log)")
        );
    }

    #[test]
    fn given_schemas_are_given_and_made_ones_are_not() {
        let given = Schemas::ready(MadeSchemas::given("{}", r#"{"type":"object"}"#));
        assert_eq!(
            given.given().unwrap().output().unwrap(),
            r#"{"type":"object"}"#
        );
        let made = Schemas::ready(MadeSchemas::made("{}", "{}", kept));
        assert!(
            made.given().is_some(),
            "made with the tool, they are checked as given"
        );
        struct Makes;
        impl MakeSchemas for Makes {
            fn make(&self) -> Result<MadeSchemas, String> {
                Ok(MadeSchemas::made("{}", "{}", kept))
            }
        }
        let later = Schemas::later(Box::new(Makes));
        assert!(later.given().is_none());
        later.get("t").unwrap();
        assert!(later.given().is_none(), "made later, they are never given");
    }
}
