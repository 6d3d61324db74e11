//! [`RefreshingExecutor`]: an executor over imported tools that follows the servers' lists.

use std::sync::{Mutex, PoisonError};

use tool_runtime::{BuildError, Executor, ExecutorBuilder};

use crate::{McpBuilderExt, McpTools};

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
/// let out = live.executor()?.execute("files.read", r#"{"path": "a.txt"}"#).await?;
/// # Ok(()) }
/// ```
pub struct RefreshingExecutor {
    make: MakeBuilder,
    imports: Vec<McpTools>,
    /// The executor last built, and the lists' generations it was built from.
    built: Mutex<(Vec<u64>, Executor)>,
}

impl RefreshingExecutor {
    /// Builds the first executor: `make()` with every tool of `imports` added (`.mcp(..)`).
    pub fn new(
        make: impl Fn() -> ExecutorBuilder + Send + Sync + 'static,
        imports: Vec<McpTools>,
    ) -> Result<Self, BuildError> {
        let make: MakeBuilder = Box::new(make);
        let generations = generations(&imports);
        let exec = build(&make, &imports)?;
        Ok(RefreshingExecutor {
            make,
            imports,
            built: Mutex::new((generations, exec)),
        })
    }

    /// The executor for the servers' lists as they are now: the one last built, or a new one
    /// when a list changed since. Fails when the new list does not build (two tools of one
    /// name, say); the next call tries again.
    pub fn executor(&self) -> Result<Executor, BuildError> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        let now = generations(&self.imports);
        if built.0 != now {
            let exec = build(&self.make, &self.imports)?;
            *built = (now, exec);
        }
        Ok(built.1.clone())
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

fn build(make: &MakeBuilder, imports: &[McpTools]) -> Result<Executor, BuildError> {
    imports
        .iter()
        .fold(make(), |builder, tools| builder.mcp(tools))
        .build()
}

impl std::fmt::Debug for RefreshingExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefreshingExecutor")
            .field("imports", &self.imports)
            .finish_non_exhaustive()
    }
}
