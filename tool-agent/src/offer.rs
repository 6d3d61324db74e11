//! The tools one run offers the model, and the rule that only those can be called.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

use tool_core::provider::{declare, Aliases, Declarations, DeclareOptions, Format};
use tool_core::{ToolError, ToolSpec};

/// The tools offered to the model in one run, declared once in the model's format.
///
/// Only these can be called: a call to any other tool is refused with
/// [`ToolError::NotOffered`] (or [`ToolError::UnknownTool`] when no tool has the name), whose
/// suggestions name offered tools only.
#[derive(Debug, Clone, Default)]
pub struct OfferedTools {
    specs: Vec<ToolSpec>,
    names: HashSet<String>,
    declarations: Option<Declarations>,
    /// The declarations' tools as JSON text, written on first use and sent by every request.
    tools_json: OnceLock<String>,
}

impl OfferedTools {
    /// No tools.
    pub fn none() -> Self {
        OfferedTools::default()
    }

    /// These tools, declared for `format` when one is given.
    pub fn new(specs: Vec<ToolSpec>, format: Option<Format>, options: &DeclareOptions) -> Self {
        let declarations = format.map(|format| declare(&specs, format, options));
        let names = specs.iter().map(|s| s.name.clone()).collect();
        OfferedTools {
            specs,
            names,
            declarations,
            tools_json: OnceLock::new(),
        }
    }

    /// The offered tools' specs, in the executor's order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The declarations in the model's format, when the model named one
    /// ([`ChatModel::format`](crate::ChatModel::format)).
    pub fn declarations(&self) -> Option<&Declarations> {
        self.declarations.as_ref()
    }

    /// The declarations made for the run, or, when the model named no format, these tools
    /// declared in `format` now (with the default options).
    pub fn declarations_or_declare(&self, format: Format) -> Cow<'_, Declarations> {
        match &self.declarations {
            Some(declared) => Cow::Borrowed(declared),
            None => Cow::Owned(declare(&self.specs, format, &DeclareOptions::default())),
        }
    }

    /// The aliases that map the model's tool names back to the tools' (none without
    /// declarations).
    pub fn aliases(&self) -> Cow<'_, Aliases> {
        match &self.declarations {
            Some(declared) => Cow::Borrowed(&declared.aliases),
            None => Cow::Owned(Aliases::default()),
        }
    }

    /// The declarations' tools as JSON text (`[]` without declarations), written once for all
    /// the requests of a run.
    pub fn tools_json(&self) -> &str {
        self.tools_json.get_or_init(|| match &self.declarations {
            Some(declared) => declared.tools.to_string(),
            None => "[]".to_owned(),
        })
    }

    /// Whether the tool was offered.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// How many tools were offered.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether no tool was offered.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The names of the offered tools.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.specs.iter().map(|s| s.name.as_str())
    }

    /// Why a call to `name`, which was not offered, is refused: `NotOffered` when some tool
    /// has the name (`exists`), `UnknownTool` otherwise; either way the suggestions are offered
    /// tools, so the model learns nothing of the others.
    pub(crate) fn refusal(&self, name: &str, exists: bool) -> ToolError {
        let suggestions = tool_core::closest_names(name, self.names(), 3);
        if exists {
            ToolError::NotOffered {
                name: name.to_owned(),
                suggestions,
            }
        } else {
            ToolError::UnknownTool {
                name: name.to_owned(),
                suggestions,
            }
        }
    }
}
