//! What a tools file says, in one form whatever its syntax: the tools, each under a
//! schema.org type, and the types it adds to the hierarchy.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The site whose tools a request for a site no tool names is offered, as in NLWeb.
pub const DEFAULT_SITE: &str = "default";

/// The content of a tools file (`tools.xml`, or the same as TOML or JSON): tools under
/// schema.org types, and the types the file adds to the hierarchy.
///
/// Read one with [`ToolsFile::from_path`] or [`ToolsFile::parse`]; warnings
/// (unknown elements, unknown fields) are in [`ToolsFile::warnings`], never failures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolsFile {
    /// The site the tools serve (in XML, the one `<Site>` of a file that has one, unless it
    /// is `default`): it fills `{request.site}` when a request names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Types the file adds to the schema.org hierarchy: type -> parent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub types: BTreeMap<String, String>,
    /// Every tool, in file order, disabled ones included.
    #[serde(default)]
    pub tools: Vec<DeclaredTool>,
    /// What was read but not understood (unknown elements, attributes or fields).
    #[serde(skip)]
    pub warnings: Vec<ToolsFileWarning>,
}

/// One declared tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclaredTool {
    /// The tool's name, unique within its type.
    pub name: String,
    /// The schema.org type it serves (the element it is declared under in XML).
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Whether the router may offer it. A disabled tool is never a candidate.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// The site it is declared for (`<Site id="..">` in XML, a TOML or JSON file's `site`):
    /// a request for that site is offered it, one for another site is not; a request for a
    /// site no tool names, or for none, is offered the `default` site's tools when there are
    /// some (as NLWeb does), else every tool. `None`: offered on every site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// How NLWeb runs it: `builtin`, `code`, `extension` or `url`. Informational here:
    /// every handler is an executor tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<ToolMethod>,
    /// A path (for `url` tools, the endpoint), kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The executor tool that runs it; the tool's own name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
    /// Named arguments, with their descriptions: they join the answer the model is asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<ToolArgument>,
    /// Example user requests (retrieval matches them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// The scoring prompt, with placeholders such as `{request.query}`.
    #[serde(default)]
    pub prompt: String,
    /// The answer's fields with their descriptions (`score` among them), as NLWeb writes
    /// them: `{"score": "integer between 0 and 100", "search_query": ".."}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_struc: Option<Map<String, Value>>,
    /// Where it was declared, for messages.
    #[serde(skip)]
    pub origin: Origin,
}

fn enabled_by_default() -> bool {
    true
}

impl DeclaredTool {
    /// A tool of this name under this type, enabled, with this prompt.
    pub fn new(
        name: impl Into<String>,
        schema_type: impl Into<String>,
        prompt: impl Into<String>,
    ) -> Self {
        DeclaredTool {
            name: name.into(),
            schema_type: schema_type.into(),
            enabled: true,
            site: None,
            method: None,
            path: None,
            handler: None,
            arguments: Vec::new(),
            examples: Vec::new(),
            prompt: prompt.into(),
            return_struc: None,
            origin: Origin::default(),
        }
    }

    /// The same tool, run by this executor tool.
    pub fn with_handler(mut self, handler: impl Into<String>) -> Self {
        self.handler = Some(handler.into());
        self
    }

    /// The same tool, with this answer structure (a JSON object of field -> description).
    pub fn with_return_struc(mut self, fields: Map<String, Value>) -> Self {
        self.return_struc = Some(fields);
        self
    }

    /// The same tool, with one more example request.
    pub fn with_example(mut self, example: impl Into<String>) -> Self {
        self.examples.push(example.into());
        self
    }

    /// The executor tool that runs it: the `handler`, or the tool's name.
    pub fn handler_name(&self) -> &str {
        self.handler.as_deref().unwrap_or(&self.name)
    }
}

/// How NLWeb runs a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolMethod {
    /// Built into the site (NLWeb's `search`).
    Builtin,
    /// Code of the site (a handler class).
    Code,
    /// A remote endpoint.
    Url,
    /// An extension of the site (NLWeb's handler classes, in its current files).
    Extension,
}

impl ToolMethod {
    /// The method named as in the file (`builtin`, `code`, `url`, `extension`),
    /// case-insensitively.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "builtin" => Some(ToolMethod::Builtin),
            "code" => Some(ToolMethod::Code),
            "url" => Some(ToolMethod::Url),
            "extension" => Some(ToolMethod::Extension),
            _ => None,
        }
    }
}

/// A named argument of a declared tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolArgument {
    /// The name, as the handler's parameter.
    pub name: String,
    /// What it is, for the model.
    #[serde(default)]
    pub description: String,
}

/// Where a tool was declared: a file and line, or an entry of a TOML or JSON array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The file, when the tools came from one.
    pub file: Option<String>,
    /// The line (from 1), when known.
    pub line: Option<usize>,
    /// The element or entry (`<Tool name="details">`, `tools[3]`).
    pub element: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.as_deref().unwrap_or("<tools file>");
        match self.line {
            Some(line) => write!(f, "{file}:{line}: {}", self.element),
            None => write!(f, "{file}: {}", self.element),
        }
    }
}

/// Something a file says that the reader does not understand: reported, never a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsFileWarning {
    /// Where.
    pub origin: Origin,
    /// What.
    pub message: String,
}

impl fmt::Display for ToolsFileWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}
