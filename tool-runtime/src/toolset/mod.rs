//! Toolsets: tools gathered from anywhere (an executor, an MCP server's import, a retriever's
//! pick), then combined, filtered, renamed and wrapped in layers before an executor serves them.
//!
//! [`Toolset`] is the set; [`ToolLayer`] what wraps its calls, with four layers here:
//! [`CallLog`], [`RateLimit`], [`ConcurrencyLimit`] and [`ResultCache`].

mod layer;
mod layers;

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;
use tool_core::{ToolError, ToolSpec};

use crate::dynamic::{invoke, DynamicTool};
use crate::executor::{BuildError, Executor};

pub use layer::{layer_fn, LayerFuture, Next, ToolLayer};
pub use layers::{
    CallLog, ConcurrencyLimit, RateLimit, RateLimited, ResultCache, DEFAULT_CACHE_ENTRIES,
    DEFAULT_CACHE_ENTRY_BYTES,
};

/// A set of tools to shape before serving them: [`with`](Toolset::with) another set,
/// [`filter`](Toolset::filter) it, [`prefixed`](Toolset::prefixed) or
/// [`renamed`](Toolset::renamed), and [`layer`](Toolset::layer) every call of it (logging, rate
/// limits, caching, concurrency). Then [`into_executor`](Toolset::into_executor), or
/// [`ExecutorBuilder::toolset`](crate::ExecutorBuilder::toolset) beside other tools.
///
/// Where tools come from:
///
/// - an executor's, [`Toolset::of`]: each call goes through that executor, with its services,
///   time limits and checks;
/// - any [`DynamicTool`]s, [`Toolset::from_tools`]: an MCP server's imported tools
///   (`McpTools::tools()` in `tool-mcp`), tools built at run time, declared catalog tools;
/// - a retriever's pick: [`only`](Toolset::only) the names it found (and, for an agent run,
///   [`with_metadata`](Toolset::with_metadata) making them offered whatever their
///   `selectable`).
///
/// Names are checked when the executor is built, as any tool's are: two tools of one name in
/// the combined set are a [`BuildError`] naming both, so a clash never hides a tool.
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use tool_runtime::toolset::{RateLimit, Toolset};
/// use tool_runtime::{DynamicTool, ToolOutput};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let echo = DynamicTool::new("echo", "Repeats its text", json!({"type": "object"}), |args, _| async move {
///     Ok(ToolOutput::text(args.to_string()))
/// });
/// let drop_all = DynamicTool::new("drop_all", "Drops every table", json!({"type": "object"}), |_, _| async {
///     Ok(ToolOutput::text("dropped"))
/// });
/// let exec = Toolset::from_tools([echo, drop_all])
///     .without(["drop_all"])
///     .prefixed("util_")
///     .layer(RateLimit::new(60, Duration::from_secs(60)))
///     .into_executor()?;
/// assert_eq!(exec.tools().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["util_echo"]);
/// let out = exec.execute("util_echo", r#"{"a": 1}"#).await?;
/// assert_eq!(out.to_text(), r#"{"a":1}"#);
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct Toolset {
    tools: Vec<DynamicTool>,
}

impl Toolset {
    /// An empty set.
    pub fn new() -> Self {
        Toolset::default()
    }

    /// A set of these tools.
    pub fn from_tools(tools: impl IntoIterator<Item = DynamicTool>) -> Self {
        Toolset {
            tools: tools.into_iter().collect(),
        }
    }

    /// The tools of an executor, with their specs as it lists them. A call of one goes through
    /// that executor ([`Executor::execute_with`]): its services, its tools' time limits, its
    /// output checks, and the caller's call id, cancellation, progress and log sinks and
    /// extensions passed on. The arguments are checked twice, by the executor serving the set
    /// and by this one, against the same schema. Tools it only declares stay declared.
    pub fn of(executor: &Executor) -> Self {
        let tools = executor
            .tools()
            .map(|spec| {
                if executor.is_executable(&spec.name) {
                    forwarded(executor, spec.clone())
                } else {
                    DynamicTool::declared(spec.clone())
                }
            })
            .collect();
        Toolset { tools }
    }

    /// This set and another, this one's tools first.
    pub fn with(mut self, other: Toolset) -> Self {
        self.tools.extend(other.tools);
        self
    }

    /// The tools for which `keep` is true: by name, by metadata (`read_only`, a category, a
    /// purpose...), or anything else the spec says.
    pub fn filter(mut self, mut keep: impl FnMut(&ToolSpec) -> bool) -> Self {
        self.tools.retain(|tool| keep(&tool.spec));
        self
    }

    /// Only the tools of these names (names not in the set are ignored): a retriever's pick,
    /// say.
    pub fn only<S: AsRef<str>>(self, names: impl IntoIterator<Item = S>) -> Self {
        let names: HashSet<String> = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        self.filter(|spec| names.contains(&spec.name))
    }

    /// The set without the tools of these names.
    pub fn without<S: AsRef<str>>(self, names: impl IntoIterator<Item = S>) -> Self {
        let names: HashSet<String> = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        self.filter(|spec| !names.contains(&spec.name))
    }

    /// Every tool's name with `prefix` before it (`github_` + `search`), so that two sets with
    /// the same names can be served together. The calls reach the tools as before.
    pub fn prefixed(mut self, prefix: &str) -> Self {
        for tool in &mut self.tools {
            tool.spec.name = format!("{prefix}{}", tool.spec.name);
        }
        self
    }

    /// The tool called `from` is called `to`; nothing changes when there is none.
    pub fn renamed(mut self, from: &str, to: impl Into<String>) -> Self {
        if let Some(tool) = self.tools.iter_mut().find(|t| t.spec.name == from) {
            tool.spec.name = to.into();
        }
        self
    }

    /// Every tool's metadata changed by `change`: a category for the whole set, hints, or
    /// `selectable = false` so that an agent offers every tool of a set picked for one run.
    /// The name, description and schemas stay as they are.
    pub fn with_metadata(mut self, mut change: impl FnMut(&mut tool_core::ToolMetadata)) -> Self {
        for tool in &mut self.tools {
            change(&mut tool.spec.metadata);
        }
        self
    }

    /// Every executable tool of the set, as it is now, with `layer` around its calls. Layers
    /// added later wrap those added earlier: the last one runs first. Tools added to the set
    /// afterwards (with [`with`](Toolset::with)) are not wrapped.
    pub fn layer(mut self, layer: impl ToolLayer) -> Self {
        let layer: Arc<dyn ToolLayer> = Arc::new(layer);
        for tool in &mut self.tools {
            if let Some(inner) = tool.invoke.take() {
                tool.invoke = Some(layer::wrapped(
                    Arc::clone(&layer),
                    Arc::new(tool.spec.clone()),
                    inner,
                ));
            }
        }
        self
    }

    /// The specs of the set's tools, in order.
    pub fn specs(&self) -> impl ExactSizeIterator<Item = &ToolSpec> + '_ {
        self.tools.iter().map(|t| &t.spec)
    }

    /// How many tools the set has.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set has no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The set's tools.
    pub fn into_tools(self) -> Vec<DynamicTool> {
        self.tools
    }

    /// An executor of the set's tools alone (`#[ai_tool]` tools not added), with the default
    /// limits. For other limits, or beside other tools, use
    /// [`ExecutorBuilder::toolset`](crate::ExecutorBuilder::toolset).
    pub fn into_executor(self) -> Result<Executor, BuildError> {
        Executor::builder()
            .registered_tools(false)
            .toolset(self)
            .build()
    }
}

impl FromIterator<DynamicTool> for Toolset {
    fn from_iter<I: IntoIterator<Item = DynamicTool>>(iter: I) -> Self {
        Toolset::from_tools(iter)
    }
}

impl From<Vec<DynamicTool>> for Toolset {
    fn from(tools: Vec<DynamicTool>) -> Self {
        Toolset { tools }
    }
}

impl From<&Executor> for Toolset {
    fn from(executor: &Executor) -> Self {
        Toolset::of(executor)
    }
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| &t.spec.name))
            .finish()
    }
}

/// A tool of `executor` that calls it there, under its name there, whatever it is called here.
fn forwarded(executor: &Executor, spec: ToolSpec) -> DynamicTool {
    let executor = executor.clone();
    let name: Arc<str> = spec.name.as_str().into();
    DynamicTool {
        spec,
        invoke: Some(invoke(move |args: Value, ctx, guard| {
            let executor = executor.clone();
            let name = Arc::clone(&name);
            guard.boxed(async move {
                let options = ctx.forwarded_options();
                let result: Result<_, ToolError> =
                    executor.execute_with(&name, args, &options).await;
                result
            })
        })),
    }
}

#[cfg(test)]
mod tests;
