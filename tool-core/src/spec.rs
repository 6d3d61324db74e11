use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Everything a model, a retriever or a policy needs to know about one tool.
///
/// Built once (at `Executor::build()` or when a catalog is read) and shared behind an `Arc`: the
/// hot path never clones it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The canonical JSON Schema of the arguments object. It is exactly the schema that
    /// validation enforces.
    pub parameters: Value,
    /// The JSON Schema of the structured result, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Everything else known about the tool.
    #[serde(default, skip_serializing_if = "ToolMetadata::is_empty")]
    pub metadata: ToolMetadata,
}

/// What every tool needs before it can be declared to a model, whatever its source (macro,
/// dynamic tool, catalog line): the one rule, checked by [`ToolSpec::check`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The description is empty or blank.
    #[error("the description is empty; say what the tool does, for the model")]
    EmptyDescription,
    /// The arguments schema's root is not `"type": "object"`.
    #[error("the arguments schema's root must be `\"type\": \"object\"` (arguments are always a JSON object), but {found}")]
    RootNotObject {
        /// What the root is instead, in words (`its type is "string"`, `it has no `type``).
        found: String,
    },
}

impl ToolSpec {
    /// Checks the rule every tool follows: a description that is not blank, and an arguments
    /// schema whose root is `{"type": "object", ...}`. The schema itself is checked elsewhere
    /// (`schema::check_is_schema`).
    ///
    /// ```
    /// # use tool_core::{SpecError, ToolSpec};
    /// # use serde_json::json;
    /// let spec = ToolSpec {
    ///     name: "shout".into(),
    ///     description: "Upper-cases text".into(),
    ///     parameters: json!({ "type": "string" }),
    ///     output_schema: None,
    ///     metadata: Default::default(),
    /// };
    /// assert!(matches!(spec.check(), Err(SpecError::RootNotObject { .. })));
    /// ```
    pub fn check(&self) -> Result<(), SpecError> {
        match self.problems().into_iter().next() {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// Every way the tool breaks the rule [`ToolSpec::check`] checks, all at once: empty when
    /// it follows it.
    pub fn problems(&self) -> Vec<SpecError> {
        let mut problems = Vec::new();
        if let Err(problem) = check_root(&self.parameters) {
            problems.push(problem);
        }
        if self.description.trim().is_empty() {
            problems.push(SpecError::EmptyDescription);
        }
        problems
    }
}

fn check_root(parameters: &Value) -> Result<(), SpecError> {
    let found = match parameters {
        Value::Object(root) => match root.get("type") {
            Some(Value::String(t)) if t == "object" => return Ok(()),
            Some(other) => format!("its type is {other}"),
            None => "it has no `type`".to_owned(),
        },
        other => format!("it is {other}"),
    };
    Err(SpecError::RootNotObject { found })
}

/// What is known about a tool beyond its name, description and schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolMetadata {
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A free-form category, such as `"billing"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The purposes the tool serves, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub purposes: Vec<String>,
    /// Whether retrieval may leave the tool out. A tool that is not selectable is a system tool:
    /// it is always offered.
    #[serde(skip_serializing_if = "is_false")]
    pub selectable: bool,
    /// Extra words that retrieval matches the tool by.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Example user requests the tool answers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Example argument objects.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_examples: Vec<Value>,
    /// What the tool does to the world, as hints for clients and policies.
    #[serde(skip_serializing_if = "SafetyHints::is_empty")]
    pub hints: SafetyHints,
    /// The longest a call may run, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The most bytes of one result sent on (to the model by the agent loop, to the client by
    /// the MCP server), its attachments' data included. It narrows the run's or the server's cap,
    /// never widens it: the smaller applies (`#[ai_tool(max_result_bytes = 20_000)]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_result_bytes: Option<usize>,
    /// How many calls in a row the agent loop lets the model make again after a call of the
    /// tool came back with invalid arguments or [`ToolError::Retry`](crate::ToolError::Retry);
    /// `None` leaves it to the run (`#[ai_tool(max_retries = 2)]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<usize>,
    /// A person approves each call before it runs: the agent loop stops with the call pending
    /// (`#[ai_tool(requires_approval)]`). The executor itself runs what it is asked to.
    #[serde(skip_serializing_if = "is_false")]
    pub requires_approval: bool,
    /// Strict mode for this tool where the API has one (OpenAI, Anthropic): `Some(true)` asks
    /// for it (a schema its profile cannot say is still declared non-strict, with a note),
    /// `Some(false)` never, `None` as [`DeclareOptions::strict`](crate::provider::DeclareOptions)
    /// says (`#[ai_tool(strict = false)]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Where the tool was defined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<ToolSource>,
    /// Declared for loading on demand where the API has tool search (Anthropic and OpenAI
    /// Responses declare it with `defer_loading: true`): the model sees it only once a tool
    /// search has found it, and the request's tools stay the same from step to step. Other
    /// APIs declare it as usual.
    #[serde(skip_serializing_if = "is_false")]
    pub defer_loading: bool,
    /// The tool is a client-side tool search: its results name the deferred tools it found
    /// ([`Content::ToolReference`](crate::Content::ToolReference)). OpenAI Responses declares
    /// it as a `tool_search` tool executed by the client and answers it with a
    /// `tool_search_output` of the found tools' declarations; Anthropic declares it as a tool
    /// and answers with `tool_reference` blocks.
    #[serde(skip_serializing_if = "is_false")]
    pub searches_tools: bool,
    /// The tool takes plain text, not JSON arguments ([`TextInput`](crate::TextInput)): OpenAI
    /// Chat and Responses declare it as a custom tool (with its grammar), the other APIs as a
    /// function of one string. Its `parameters` are [`TextInput::schema`](crate::TextInput::schema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_input: Option<crate::TextInput>,
    /// Who may call the tool where the API asks: the model directly (the default), code the
    /// model runs in the provider's sandbox (Anthropic's programmatic tool calling, beside
    /// [`HostedTool::ProgrammaticCalling`](crate::provider::hosted::HostedTool)), or both.
    #[serde(skip_serializing_if = "Callers::is_model")]
    pub callers: Callers,
    /// The group the tool is declared in where the API groups tools (OpenAI Responses'
    /// `namespace` tools, which tool search finds by their description): a service's tools,
    /// or an MCP server's. The other APIs declare the tool alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Namespace>,
    /// Images a client may show for the tool (MCP's `icons`): served in `tools/list`, read
    /// from an imported server's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Whether an MCP server runs a call of the tool as a task, answered at once with the
    /// task's id and polled for its result (MCP's tasks extension, protocol 2026-07-28), for a
    /// tool that may run longer than a client holds a request open (`#[ai_tool(task)]`).
    #[serde(skip_serializing_if = "TaskSupport::is_forbidden")]
    pub task: TaskSupport,
}

/// Whether a tool's calls may run as MCP tasks ([`ToolMetadata::task`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never: every call is answered when it ends.
    #[default]
    Forbidden,
    /// As a task for a client that takes tasks; answered when it ends for any other
    /// (`#[ai_tool(task)]`).
    Optional,
    /// Only as a task: a client that takes no tasks is refused
    /// (`#[ai_tool(task = "required")]`).
    Required,
}

impl TaskSupport {
    fn is_forbidden(&self) -> bool {
        *self == TaskSupport::Forbidden
    }
}

/// An image for a tool ([`ToolMetadata::icons`]), as MCP describes one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// Where it is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its media type, where the URL's is missing or generic (`image/png`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its sizes, `WxH` (`48x48`) or `any` for a scalable image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
        }
    }
}

/// A group of tools declared together ([`ToolMetadata::namespace`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Namespace {
    /// Its name, as the calls name it (`crm`).
    pub name: String,
    /// What its tools are for, for the model (and its tool search) to know the group by.
    pub description: String,
}

/// Who may call a tool ([`ToolMetadata::callers`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Callers {
    /// The model, directly.
    #[default]
    Model,
    /// Code the model runs in the provider's sandbox, and not the model directly: the calls
    /// happen inside the code, and their results reach the code, not the model's context.
    Code,
    /// Both.
    ModelAndCode,
}

impl Callers {
    fn is_model(&self) -> bool {
        *self == Callers::Model
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl ToolMetadata {
    /// Whether the tool may destroy or overwrite data, as a policy reads it: marked
    /// `destructive`; or imported from an MCP server ([`ToolSource::Mcp`]) without a
    /// `destructiveHint`, which MCP's default reads as destructive unless the tool says it is
    /// read-only.
    pub fn may_destroy(&self) -> bool {
        match self.hints.destructive {
            Some(destructive) => destructive,
            None => self.is_imported() && self.hints.read_only != Some(true),
        }
    }

    /// Whether the tool was imported from an MCP server.
    pub fn is_imported(&self) -> bool {
        matches!(self.source, Some(ToolSource::Mcp { .. }))
    }

    /// Whether nothing at all is known.
    pub fn is_empty(&self) -> bool {
        self == &ToolMetadata::default()
    }
}

/// The safety hints of MCP's tool annotations. `None` means not stated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SafetyHints {
    /// The tool does not change its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same arguments does no more than calling it once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the web, other people), not a closed domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl SafetyHints {
    /// Whether no hint is stated.
    pub fn is_empty(&self) -> bool {
        self == &SafetyHints::default()
    }
}

/// Where a tool was defined: shown in build errors so that two definitions can be found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolSource {
    /// `#[ai_tool]` in Rust code.
    Macro {
        /// The module path.
        module: String,
        /// The source file.
        file: String,
        /// The line of the function.
        line: u32,
    },
    /// A line of a catalog file.
    Catalog {
        /// The file.
        file: String,
        /// The line, 1-based.
        line: usize,
    },
    /// Defined at run time.
    Dynamic,
    /// Imported from an MCP server. Its annotations are the server's word: MCP says they are
    /// untrusted, and a missing hint means MCP's default (see
    /// [`ToolMetadata::may_destroy`]).
    Mcp {
        /// The server, as the user named it.
        server: String,
    },
    /// A hand-written tool (a type implementing the runtime's `Tool` trait), registered on the
    /// executor's builder at this place.
    Registered {
        /// The source file of the registration.
        file: String,
        /// Its line.
        line: u32,
    },
}

impl std::fmt::Display for ToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSource::Macro { module, file, line } => write!(f, "{module} ({file}:{line})"),
            ToolSource::Catalog { file, line } => write!(f, "{file}:{line}"),
            ToolSource::Dynamic => f.write_str("a tool defined at run time"),
            ToolSource::Mcp { server } => write!(f, "the MCP server {server}"),
            ToolSource::Registered { file, line } => write!(f, "{file}:{line}"),
        }
    }
}
