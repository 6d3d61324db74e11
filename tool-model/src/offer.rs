//! The tools one run offers the model, and the rule that only those can be called.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

use tool_core::provider::hosted::HostedTool;
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
    /// The format the tools were declared in, and the declarations.
    declarations: Option<(Format, Declarations)>,
    /// How they are declared, in that format or another.
    options: DeclareOptions,
    /// Tools the provider runs, declared after these in the formats that host them.
    hosted: Vec<HostedTool>,
    /// The offered tools that may be called, when not all of them may: the others are
    /// declared (to keep the request's tools the same), and refused.
    callable: Option<Vec<String>>,
    /// The tools declared in one other format, the first asked for (a fallback model's).
    other: OnceLock<(Format, Declarations)>,
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
        let declarations = format.map(|format| (format, declare(&specs, format, options)));
        let names = specs.iter().map(|s| s.name.clone()).collect();
        OfferedTools {
            specs,
            names,
            declarations,
            options: *options,
            hosted: Vec::new(),
            callable: None,
            other: OnceLock::new(),
            tools_json: OnceLock::new(),
        }
    }

    /// These tools, and tools the provider runs declared after them (a hosted tool search,
    /// say). A format that does not host one of them is sent the others, with a note in the
    /// declarations saying so.
    pub fn with_hosted(mut self, hosted: Vec<HostedTool>) -> Self {
        self.hosted = hosted;
        if let Some((format, declared)) = &mut self.declarations {
            *declared = declare_all(&self.specs, &self.hosted, *format, &self.options);
        }
        self.other = OnceLock::new();
        self.tools_json = OnceLock::new();
        self
    }

    /// These tools, of which only the ones named in `callable` may be called: the others stay
    /// declared, so that the request's tools are the same as a run's that may call them all,
    /// and their calls are refused with [`ToolError::NotOffered`]. A run sends the
    /// restriction as [`ToolChoice::Allowed`](crate::ToolChoice::Allowed) where the API has it
    /// ([`ToolChoice::keeps_declarations_in`](crate::ToolChoice::keeps_declarations_in)).
    pub fn with_callable(mut self, callable: Vec<String>) -> Self {
        let callable: Vec<String> = callable
            .into_iter()
            .filter(|name| self.names.contains(name))
            .collect();
        self.callable = (callable.len() < self.specs.len()).then_some(callable);
        self
    }

    /// The offered tools that may be called, when not all of them may.
    pub fn callable(&self) -> Option<&[String]> {
        self.callable.as_deref()
    }

    /// Whether the offered tool `name` may be called (an offered tool not restricted away).
    pub fn is_callable(&self, name: &str) -> bool {
        self.contains(name)
            && self
                .callable
                .as_ref()
                .is_none_or(|callable| callable.iter().any(|n| n == name))
    }

    /// The tools the provider runs, declared after the offered ones.
    pub fn hosted(&self) -> &[HostedTool] {
        &self.hosted
    }

    /// The offered tools' specs, in the executor's order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The declarations in the model's format, when the model named one
    /// ([`ChatModel::format`](crate::ChatModel::format)).
    pub fn declarations(&self) -> Option<&Declarations> {
        self.declarations.as_ref().map(|(_, declared)| declared)
    }

    /// The declarations in `format`: those made for the run when they are in that format,
    /// else these tools declared in it now, with the run's options (a model of another API
    /// than the run's, such as a [`FallbackModel`](crate::FallbackModel)'s second).
    pub fn declarations_or_declare(&self, format: Format) -> Cow<'_, Declarations> {
        if let Some((made, declared)) = &self.declarations {
            if *made == format {
                return Cow::Borrowed(declared);
            }
        }
        let declare = || declare_all(&self.specs, &self.hosted, format, &self.options);
        let (other, declared) = self.other.get_or_init(|| (format, declare()));
        if *other == format {
            return Cow::Borrowed(declared);
        }
        Cow::Owned(declare())
    }

    /// The aliases that map the model's tool names back to the tools', for the run's format
    /// (none without declarations); [`OfferedTools::aliases_for`] for another.
    pub fn aliases(&self) -> Cow<'_, Aliases> {
        match &self.declarations {
            Some((_, declared)) => Cow::Borrowed(&declared.aliases),
            None => Cow::Owned(Aliases::default()),
        }
    }

    /// The aliases the tools are declared under in `format`.
    pub fn aliases_for(&self, format: Format) -> Cow<'_, Aliases> {
        match self.declarations_or_declare(format) {
            Cow::Borrowed(declared) => Cow::Borrowed(&declared.aliases),
            Cow::Owned(declared) => Cow::Owned(declared.aliases),
        }
    }

    /// The declarations' tools as JSON text (`[]` without declarations), written once for all
    /// the requests of a run.
    pub fn tools_json(&self) -> &str {
        match &self.declarations {
            Some((format, _)) => self.tools_json_for(*format).unwrap_or("[]"),
            None => "[]",
        }
    }

    /// The declarations' tools as JSON text, when they are in `format`: written once for all
    /// the requests of a run.
    pub fn tools_json_for(&self, format: Format) -> Option<&str> {
        match &self.declarations {
            Some((made, declared)) if *made == format => Some(
                self.tools_json
                    .get_or_init(|| declared.tools.to_string())
                    .as_str(),
            ),
            _ => None,
        }
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
    pub fn refusal(&self, name: &str, exists: bool) -> ToolError {
        let suggestions = tool_core::suggest::closest_names(name, self.names(), 3);
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

/// The tools declared in `format`, then the hosted tools that format has.
fn declare_all(
    specs: &[ToolSpec],
    hosted: &[HostedTool],
    format: Format,
    options: &DeclareOptions,
) -> Declarations {
    let mut declared = declare(specs, format, options);
    for tool in hosted {
        match (tool.declaration(format), declared.tools.as_array_mut()) {
            (Ok(value), Some(tools)) => tools.push(value),
            (Ok(_), None) => declared.notes.push(format!(
                "{format} takes no hosted tool beside its own tools"
            )),
            (Err(e), _) => declared.notes.push(e.to_string()),
        }
    }
    declared
}
