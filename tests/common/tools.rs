//! Tools defined at run time, and the executors the tests build around tools.

use std::sync::Arc;

use ai_tool::prelude::*;
use serde_json::Value;

/// A tool that answers with its arguments, as JSON.
pub fn echo(name: &str, schema: Value) -> DynamicTool {
    DynamicTool::new(name, "Echoes", schema, |args, _ctx| async move {
        Ok(ToolOutput::json(args))
    })
}

/// A tool that does nothing and answers with nothing.
pub fn noop(name: &str, description: &str, schema: Value) -> DynamicTool {
    DynamicTool::new(name, description, schema, |_, _| async {
        Ok(ToolOutput::empty())
    })
}

/// An executor of `tools` alone: none of the binary's registered tools.
pub fn executor_of(
    tools: impl IntoIterator<Item = DynamicTool>,
) -> Result<Executor, ai_tool::BuildError> {
    Executor::builder()
        .registered_tools(false)
        .tools(tools)
        .build()
}

/// An executor of the binary's registered tools, serving `service`.
pub fn serving<S: Send + Sync + 'static>(service: S) -> Executor {
    Executor::builder()
        .service(Arc::new(service))
        .build()
        .expect("the executor builds")
}
