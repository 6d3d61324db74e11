//! Tools added on the builder with `.tool(..)`: hand-written tools and dynamic ones, the
//! [`AddedTool`] that takes their metadata fluently, and the entries they become at `build()`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_core::schema::SchemaLimits;
use tool_core::{CatalogEntry, SafetyHints, ToolSpec};

use super::build::ExecutorBuilder;
use super::build_error::BuildError;
use super::new_tool::{into_new_tool, IntoTool, NewTool};
use super::Executor;
use crate::dynamic::DynamicTool;

/// The builder right after [`ExecutorBuilder::tool`]: the tool just added takes its metadata
/// here, as `#[ai_tool(..)]` sets it, and every method of [`ExecutorBuilder`] carries on with
/// the builder.
///
/// ```
/// # use tool_runtime::{DynamicTool, Executor, ToolOutput};
/// # use serde_json::json;
/// # fn main() -> Result<(), tool_runtime::BuildError> {
/// let echo = DynamicTool::new("echo", "Repeats the text", json!({"type": "object"}), |args, _| async move {
///     Ok(ToolOutput::json(args))
/// });
/// let exec = Executor::builder()
///     .tool(echo)
///     .title("Echo")
///     .category("Testing")
///     .keywords(["repeat", "parrot"])
///     .read_only()
///     .build()?;
/// let spec = exec.spec("echo").expect("added");
/// assert_eq!(spec.metadata.title.as_deref(), Some("Echo"));
/// assert_eq!(spec.metadata.hints.read_only, Some(true));
/// # Ok(()) }
/// ```
///
/// The metadata is checked at `build()`, with the tool: a name its rule refuses, a blank
/// description, or two tools of one name are [`BuildProblem`](crate::BuildProblem)s there. To keep the builder in a
/// variable, return it, or call a method an extension trait adds to it (such as the MCP
/// crate's `.mcp(..)`), convert: `ExecutorBuilder::from(added)` or `.into()`.
#[must_use = "an added tool is kept by the builder it carries; build it or go on adding"]
pub struct AddedTool {
    builder: ExecutorBuilder,
    tool: NewTool,
}

impl AddedTool {
    pub(super) fn new(builder: ExecutorBuilder, tool: NewTool) -> Self {
        AddedTool { builder, tool }
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

    /// The tool's spec as it stands (its schema as written or derived, its metadata so far).
    pub fn spec(&self) -> &ToolSpec {
        match &self.tool {
            NewTool::Dynamic(tool) => &tool.spec,
            NewTool::Typed(tool) => &tool.spec,
        }
    }

    /// The builder, with the tool added.
    fn done(self) -> ExecutorBuilder {
        let AddedTool { mut builder, tool } = self;
        builder.added.push(tool);
        builder
    }

    // Every `ExecutorBuilder` method has its twin below, so that a chain reads on after the
    // metadata; a method added to the builder needs one here too.

    /// [`ExecutorBuilder::service`].
    pub fn service<S: std::any::Any + Send + Sync>(self, service: Arc<S>) -> ExecutorBuilder {
        self.done().service(service)
    }

    /// [`ExecutorBuilder::provide`].
    pub fn provide<T: std::any::Any + Send + Sync>(self, value: Arc<T>) -> ExecutorBuilder {
        self.done().provide(value)
    }

    /// [`ExecutorBuilder::tool`]: adds the next tool.
    #[track_caller]
    pub fn tool(self, tool: impl IntoTool) -> AddedTool {
        self.done().tool(tool)
    }

    /// [`ExecutorBuilder::tools`].
    pub fn tools(self, tools: impl IntoIterator<Item = DynamicTool>) -> ExecutorBuilder {
        self.done().tools(tools)
    }

    /// [`ExecutorBuilder::catalog`].
    pub fn catalog(self, entries: impl IntoIterator<Item = CatalogEntry>) -> ExecutorBuilder {
        self.done().catalog(entries)
    }

    /// [`ExecutorBuilder::catalog_file`].
    pub fn catalog_file(self, path: impl Into<PathBuf>) -> ExecutorBuilder {
        self.done().catalog_file(path)
    }

    /// [`ExecutorBuilder::registered_tools`].
    pub fn registered_tools(self, include: bool) -> ExecutorBuilder {
        self.done().registered_tools(include)
    }

    /// [`ExecutorBuilder::default_timeout`].
    pub fn default_timeout(self, limit: Duration) -> ExecutorBuilder {
        self.done().default_timeout(limit)
    }

    /// [`ExecutorBuilder::max_argument_bytes`].
    pub fn max_argument_bytes(self, limit: usize) -> ExecutorBuilder {
        self.done().max_argument_bytes(limit)
    }

    /// [`ExecutorBuilder::max_argument_depth`].
    pub fn max_argument_depth(self, levels: usize) -> ExecutorBuilder {
        self.done().max_argument_depth(levels)
    }

    /// [`ExecutorBuilder::schema_limits`].
    pub fn schema_limits(self, limits: SchemaLimits) -> ExecutorBuilder {
        self.done().schema_limits(limits)
    }

    /// [`ExecutorBuilder::catalog_line_bytes`].
    pub fn catalog_line_bytes(self, limit: usize) -> ExecutorBuilder {
        self.done().catalog_line_bytes(limit)
    }

    /// [`ExecutorBuilder::require_all_services`].
    pub fn require_all_services(self) -> ExecutorBuilder {
        self.done().require_all_services()
    }

    /// [`ExecutorBuilder::build`].
    pub fn build(self) -> Result<Executor, BuildError> {
        self.done().build()
    }
}

impl ExecutorBuilder {
    /// Adds a tool: a hand-written [`Tool`](crate::Tool) or a [`DynamicTool`]. What it returns
    /// takes the tool's metadata, as `#[ai_tool(..)]` sets it, and carries on with the builder:
    ///
    /// ```
    /// # use tool_runtime::{DynamicTool, Executor, ToolOutput};
    /// # let upper = DynamicTool::new("upper", "Upper-cases", serde_json::json!({"type": "object"}), |_, _| async { Ok(ToolOutput::empty()) });
    /// let builder = Executor::builder()
    ///     .tool(upper)
    ///     .title("Upper case")
    ///     .category("Text")
    ///     .read_only()
    ///     .default_timeout(std::time::Duration::from_secs(5));
    /// ```
    ///
    /// A hand-written tool's name follows `#[ai_tool]`'s rule, a dynamic tool's MCP's wider
    /// one; both are checked at `build()`, with the schema and the description. A hand-written
    /// tool's source, in build errors, is the file and line of this call.
    #[track_caller]
    pub fn tool(self, tool: impl IntoTool) -> AddedTool {
        let at = std::panic::Location::caller();
        let tool = into_new_tool(tool, at.file(), at.line());
        AddedTool::new(self, tool)
    }
}

impl From<AddedTool> for ExecutorBuilder {
    fn from(added: AddedTool) -> Self {
        added.done()
    }
}

impl std::fmt::Debug for AddedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddedTool")
            .field("spec", self.spec())
            .finish_non_exhaustive()
    }
}
