//! An agent as a tool ([`Agent::into_tool`]): a coordinating model hands a task to another
//! agent, with its own instructions, model and tools, and reads its answer as the result.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::{ToolError, ToolOutput};
use tool_runtime::DynamicTool;

use crate::{Agent, RunOptions, StopReason};

impl Agent {
    /// This agent as a tool named `name`, for the executor of another agent (or any executor):
    /// its arguments are `{"input": "..."}`, the task in words. A call runs this agent on the
    /// input with `options` (the call's cancellation token in place of theirs) and gives its
    /// answer: the checked output as JSON when `options` ask for one
    /// ([`RunOptions::output`]), its text otherwise. A failed run fails the call with the run's
    /// error as its source, and so does a run that stops for an approval, which a tool call
    /// cannot give.
    pub fn into_tool(
        self: Arc<Self>,
        name: impl Into<String>,
        description: impl Into<String>,
        options: RunOptions,
    ) -> DynamicTool {
        let name = name.into();
        let tool = name.clone();
        DynamicTool::new(name, description, input_schema(), move |args, ctx| {
            let agent = Arc::clone(&self);
            let tool = tool.clone();
            let mut options = options.clone();
            options.cancellation = Some(ctx.cancellation_token().clone());
            async move {
                let input = args["input"].as_str().unwrap_or_default().to_owned();
                let result = agent
                    .run(input, &options)
                    .await
                    .map_err(|error| ToolError::failed_with_source(&tool, error))?;
                if result.stop == StopReason::Interrupted {
                    return Err(ToolError::failed(
                        &tool,
                        "the agent stopped for an approval, which a tool call cannot give",
                    ));
                }
                Ok(match result.output {
                    Some(output) => ToolOutput::json(output),
                    None => ToolOutput::text(result.text),
                })
            }
        })
    }
}

/// What the tool takes: the task, in words.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "input": { "type": "string", "minLength": 1, "description": "The task, in words" }
        },
        "required": ["input"],
        "additionalProperties": false
    })
}
