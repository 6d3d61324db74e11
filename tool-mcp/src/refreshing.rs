//! [`RefreshingExecutor`]: an executor over imported tools that follows the servers' lists.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use tool_runtime::{BuildError, BuildProblem, DynamicTool, Executor, ExecutorBuilder};

use crate::McpTools;

/// Makes the builder the imported tools are added to: your own tools, services and limits.
type MakeBuilder = Box<dyn Fn() -> ExecutorBuilder + Send + Sync>;

/// An executor over the tools of MCP servers that follows their lists.
///
/// An [`Executor`] never changes once built. When a server sends
/// `notifications/tools/list_changed`, its [`McpTools`] lists the tools again, and the next
/// [`RefreshingExecutor::executor`] builds a new executor with the new list (until then, the
/// same one is returned). Ask it for the executor at each call, or each turn of a
/// conversation, rather than keeping one:
///
/// ```no_run
/// # async fn demo(files: tool_mcp::McpTools) -> Result<(), Box<dyn std::error::Error>> {
/// use tool_mcp::RefreshingExecutor;
/// let live = RefreshingExecutor::new(tool_runtime::Executor::builder, vec![files])?;
/// let out = live.executor().execute("files.read", r#"{"path": "a.txt"}"#).await?;
/// # Ok(()) }
/// ```
///
/// A server's tool the executor refuses (a schema it cannot compile, a name it does not take,
/// a name another tool has) is left out, with a warning, and the server's other tools are
/// served: one bad tool of a server you do not control does not take the others away.
/// [`RefreshingExecutor::left_out`] says which and why.
pub struct RefreshingExecutor {
    make: MakeBuilder,
    imports: Vec<McpTools>,
    /// The executor last built, and the lists' generations it was built from.
    built: Mutex<Built>,
}

/// An executor built from the servers' lists at some generations.
struct Built {
    generations: Vec<u64>,
    exec: Executor,
    /// The imported tools left out, each with why.
    left_out: Vec<String>,
}

impl RefreshingExecutor {
    /// Builds the first executor: `make()` with every tool of `imports` added (`.mcp(..)`).
    /// Fails when `make()`'s own tools do not build, or the imported ones cannot be left
    /// out of the problem.
    pub fn new(
        make: impl Fn() -> ExecutorBuilder + Send + Sync + 'static,
        imports: Vec<McpTools>,
    ) -> Result<Self, BuildError> {
        let make: MakeBuilder = Box::new(make);
        let generations = generations(&imports);
        let (exec, left_out) = build(&make, &imports)?;
        Ok(RefreshingExecutor {
            make,
            imports,
            built: Mutex::new(Built {
                generations,
                exec,
                left_out,
            }),
        })
    }

    /// The executor for the servers' lists as they are now: the one last built, or a new one
    /// when a list changed since. A new list that does not build even without its refused
    /// tools is logged, and the executor before it is kept until the next change.
    pub fn executor(&self) -> Executor {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        let now = generations(&self.imports);
        if built.generations != now {
            match build(&self.make, &self.imports) {
                Ok((exec, left_out)) => {
                    built.exec = exec;
                    built.left_out = left_out;
                }
                Err(error) => tracing::warn!(
                    %error,
                    "an imported MCP server's new tool list does not build; keeping the tools before it"
                ),
            }
            built.generations = now;
        }
        built.exec.clone()
    }

    /// The imported tools the current executor left out, each with why.
    pub fn left_out(&self) -> Vec<String> {
        let built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        built.left_out.clone()
    }

    /// The imported servers.
    pub fn imports(&self) -> &[McpTools] {
        &self.imports
    }
}

/// Each server's generation (see [`McpTools::generation`]).
pub(crate) fn generations(imports: &[McpTools]) -> Vec<u64> {
    imports.iter().map(McpTools::generation).collect()
}

/// `make()` with the imported tools, leaving out those the executor refuses: by the names
/// its problems give, and a tool that does not build on its own (a name refused, which its
/// problem does not name).
fn build(make: &MakeBuilder, imports: &[McpTools]) -> Result<(Executor, Vec<String>), BuildError> {
    let tools: Vec<DynamicTool> = imports.iter().flat_map(McpTools::tools).collect();
    let error = match make().tools(tools.iter().cloned()).build() {
        Ok(exec) => return Ok((exec, Vec::new())),
        Err(error) => error,
    };
    let imported: HashSet<&str> = tools.iter().map(|t| t.spec().name.as_str()).collect();
    let mut left_out: Vec<(String, String)> = error
        .problems
        .iter()
        .filter_map(|problem| {
            let name = named(problem)?;
            imported
                .contains(name)
                .then(|| (name.to_owned(), problem.to_string()))
        })
        .collect();
    if error.problems.iter().any(|p| named(p).is_none()) {
        for tool in &tools {
            let alone = Executor::builder()
                .registered_tools(false)
                .tool(tool.clone())
                .build();
            if let Err(error) = alone {
                left_out.push((tool.spec().name.clone(), error.to_string()));
            }
        }
    }
    if left_out.is_empty() {
        return Err(error);
    }
    let names: HashSet<&str> = left_out.iter().map(|(name, _)| name.as_str()).collect();
    let kept = tools
        .iter()
        .filter(|t| !names.contains(t.spec().name.as_str()));
    let exec = make().tools(kept.cloned()).build()?;
    let mut reasons: Vec<String> = left_out
        .iter()
        .map(|(name, why)| format!("`{name}`: {why}"))
        .collect();
    reasons.sort();
    reasons.dedup();
    for reason in &reasons {
        tracing::warn!(%reason, "an imported MCP tool is left out");
    }
    Ok((exec, reasons))
}

/// The tool a build problem names, if it names one.
fn named(problem: &BuildProblem) -> Option<&str> {
    match problem {
        BuildProblem::DuplicateTool { name, .. }
        | BuildProblem::BadSchema { name, .. }
        | BuildProblem::BadOutputSchema { name, .. }
        | BuildProblem::BadSpec { name, .. } => Some(name),
        _ => None,
    }
}

impl std::fmt::Debug for RefreshingExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefreshingExecutor")
            .field("imports", &self.imports)
            .finish_non_exhaustive()
    }
}
