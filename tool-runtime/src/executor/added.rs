//! A tool being added on the builder with
//! [`ExecutorBuilder::tool_with`](super::ExecutorBuilder::tool_with): [`AddedTool`] takes its
//! metadata fluently, as `#[ai_tool(..)]` sets it.

use std::time::Duration;

use serde_json::Value;
use tool_core::{SafetyHints, ToolSpec};

use super::new_tool::NewTool;

/// A tool being added, in the closure of
/// [`ExecutorBuilder::tool_with`](super::ExecutorBuilder::tool_with): it takes the tool's
/// metadata, as `#[ai_tool(..)]` sets it.
///
/// ```
/// # use tool_runtime::{DynamicTool, Executor, ToolOutput};
/// # use serde_json::json;
/// # fn main() -> Result<(), tool_runtime::BuildError> {
/// let echo = DynamicTool::new("echo", "Repeats the text", json!({"type": "object"}), |args, _| async move {
///     Ok(ToolOutput::json(args))
/// });
/// let exec = Executor::builder()
///     .tool_with(echo, |tool| {
///         tool.title("Echo")
///             .category("Testing")
///             .keywords(["repeat", "parrot"])
///             .read_only()
///     })
///     .build()?;
/// let spec = exec.spec("echo").expect("added");
/// assert_eq!(spec.metadata.title.as_deref(), Some("Echo"));
/// assert_eq!(spec.metadata.hints.read_only, Some(true));
/// # Ok(()) }
/// ```
///
/// The metadata is checked at `build()`, with the tool: a name its rule refuses, a blank
/// description, or two tools of one name are [`BuildProblem`](crate::BuildProblem)s there.
#[must_use = "the metadata is kept only when the closure returns the tool"]
pub struct AddedTool {
    tool: NewTool,
}

impl AddedTool {
    pub(super) fn new(tool: NewTool) -> Self {
        AddedTool { tool }
    }

    /// The tool, with its metadata, as the builder keeps it.
    pub(super) fn into_new_tool(self) -> NewTool {
        self.tool
    }

    fn metadata(mut self, set: impl FnOnce(&mut ToolSpec)) -> Self {
        set(self.tool.spec_mut());
        self
    }

    /// Renames the tool (for a hand-written tool, instead of [`Tool::name`](crate::Tool::name)).
    pub fn name(self, name: impl Into<String>) -> Self {
        self.metadata(|spec| spec.name = name.into())
    }

    /// Replaces the tool's description, the model's reading of what it does.
    pub fn description(self, description: impl Into<String>) -> Self {
        self.metadata(|spec| spec.description = description.into())
    }

    /// A human-readable title (`title = ".."`).
    pub fn title(self, title: impl Into<String>) -> Self {
        self.metadata(|spec| spec.metadata.title = Some(title.into()))
    }

    /// A free-form category (`category = ".."`).
    pub fn category(self, category: impl Into<String>) -> Self {
        self.metadata(|spec| spec.metadata.category = Some(category.into()))
    }

    /// Adds a purpose the tool serves (`purpose = ".."`, repeatable).
    pub fn purpose(self, purpose: impl Into<String>) -> Self {
        self.metadata(|spec| spec.metadata.purposes.push(purpose.into()))
    }

    /// Lets retrieval leave the tool out when it does not fit the message (`selectable`);
    /// otherwise it is a system tool, always offered.
    pub fn selectable(self) -> Self {
        self.metadata(|spec| spec.metadata.selectable = true)
    }

    /// Adds words retrieval matches the tool by (`keywords = [..]`).
    pub fn keywords<S: Into<String>>(self, keywords: impl IntoIterator<Item = S>) -> Self {
        self.metadata(|spec| (spec.metadata.keywords).extend(keywords.into_iter().map(Into::into)))
    }

    /// Adds example user requests the tool answers (`examples = [..]`).
    pub fn examples<S: Into<String>>(self, examples: impl IntoIterator<Item = S>) -> Self {
        self.metadata(|spec| (spec.metadata.examples).extend(examples.into_iter().map(Into::into)))
    }

    /// Adds example argument objects.
    pub fn input_examples(self, examples: impl IntoIterator<Item = Value>) -> Self {
        self.metadata(|spec| spec.metadata.input_examples.extend(examples))
    }

    /// The tool changes nothing (`read_only`).
    pub fn read_only(self) -> Self {
        self.metadata(|spec| spec.metadata.hints.read_only = Some(true))
    }

    /// A person approves each call before the agent loop runs it (`requires_approval`).
    pub fn requires_approval(self) -> Self {
        self.metadata(|spec| spec.metadata.requires_approval = true)
    }

    /// The tool is declared for loading on demand where the API has tool search
    /// (`defer_loading`): see [`ToolMetadata::defer_loading`](tool_core::ToolMetadata).
    pub fn defer_loading(self) -> Self {
        self.metadata(|spec| spec.metadata.defer_loading = true)
    }

    /// Who may call the tool where the API asks (`callers = ".."`): the model, code the model
    /// runs in the provider's sandbox, or both ([`Callers`](tool_core::Callers)).
    pub fn callers(self, callers: tool_core::Callers) -> Self {
        self.metadata(|spec| spec.metadata.callers = callers)
    }

    /// Declares the tool in a namespace where the API groups tools (OpenAI Responses):
    /// `name` as the calls name it, `description` saying what its tools are for
    /// ([`Namespace`](tool_core::Namespace)).
    pub fn namespace(self, name: impl Into<String>, description: impl Into<String>) -> Self {
        let namespace = tool_core::Namespace {
            name: name.into(),
            description: description.into(),
        };
        self.metadata(|spec| spec.metadata.namespace = Some(namespace))
    }

    /// Whether an MCP server runs the tool's calls as tasks (`task`, `task = "required"`).
    pub fn task(self, task: tool_core::TaskSupport) -> Self {
        self.metadata(|spec| spec.metadata.task = task)
    }

    /// Adds an image a client may show for the tool (`icon = ".."`; MCP's `icons`).
    pub fn icon(self, icon: tool_core::Icon) -> Self {
        self.metadata(|spec| spec.metadata.icons.push(icon))
    }

    /// Strict mode for this tool alone, where the API has one (`strict`): `true` asks for it
    /// whatever the declaration's options say, `false` never.
    pub fn strict(self, strict: bool) -> Self {
        self.metadata(|spec| spec.metadata.strict = Some(strict))
    }

    /// The tool may destroy or overwrite data (`destructive`).
    pub fn destructive(self) -> Self {
        self.metadata(|spec| spec.metadata.hints.destructive = Some(true))
    }

    /// Calling the tool twice with the same arguments does no more than once (`idempotent`).
    pub fn idempotent(self) -> Self {
        self.metadata(|spec| spec.metadata.hints.idempotent = Some(true))
    }

    /// The tool reaches beyond the system, such as the web (`open_world`).
    pub fn open_world(self) -> Self {
        self.metadata(|spec| spec.metadata.hints.open_world = Some(true))
    }

    /// Sets all four safety hints at once, `Some(false)` included (`open_world = false`).
    pub fn hints(self, hints: SafetyHints) -> Self {
        self.metadata(|spec| spec.metadata.hints = hints)
    }

    /// The tool's own time limit (`timeout = ".."`), instead of the executor's default, kept
    /// in whole milliseconds (a part of one counts as one: never a limit of zero).
    pub fn timeout(self, limit: Duration) -> Self {
        let ms = u64::try_from(limit.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
        self.metadata(|spec| spec.metadata.timeout_ms = Some(ms))
    }

    /// The most bytes of one of its results sent on (`max_result_bytes = N`): it narrows the
    /// agent run's cap and the MCP server's, never widens them.
    pub fn max_result_bytes(self, bytes: usize) -> Self {
        self.metadata(|spec| spec.metadata.max_result_bytes = Some(bytes))
    }

    /// How many calls in a row the agent loop lets the model make again after invalid
    /// arguments or [`ToolError::Retry`](tool_core::ToolError::Retry) (`max_retries = N`),
    /// instead of the run's default.
    pub fn max_retries(self, retries: usize) -> Self {
        self.metadata(|spec| spec.metadata.max_retries = Some(retries))
    }

    /// The tool's spec as it stands (its schema as written or derived, its metadata so far).
    pub fn spec(&self) -> &ToolSpec {
        match &self.tool {
            NewTool::Dynamic(tool) => &tool.spec,
            NewTool::Typed(tool) => &tool.spec,
        }
    }
}

impl std::fmt::Debug for AddedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddedTool")
            .field("spec", self.spec())
            .finish_non_exhaustive()
    }
}
