//! Running the tool calls of one model response.

use futures_util::future::join_all;
use serde_json::Value;
use tool_core::provider::{self, CallResult, Declarations, DeclareOptions, Format};
use tool_core::{ToolCall, ToolError, ToolOutput};

use super::{CallOptions, Executor};

impl Executor {
    /// Runs one call. Arguments given as JSON text (as OpenAI sends them) are parsed first;
    /// text that is not JSON is `InvalidArguments` naming the JSON error.
    pub async fn execute_call(
        &self,
        call: &ToolCall,
        options: &CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        let mut options = options.clone();
        if let Some(id) = &call.id {
            options.call_id = Some(id.as_str().into());
        }
        match &call.arguments {
            Value::String(text) => self.execute_with(&call.name, text.as_str(), &options).await,
            arguments => self.execute_with(&call.name, arguments, &options).await,
        }
    }

    /// Runs all calls of one response concurrently and returns their results in call order.
    /// Each call's failure (unknown tool, bad arguments, panic, timeout) is its own result; the
    /// others run as usual.
    pub async fn execute_calls(&self, calls: &[ToolCall]) -> Vec<CallResult> {
        self.execute_calls_with(calls, &CallOptions::default())
            .await
    }

    /// [`Executor::execute_calls`] with options (a cancellation token for the whole batch).
    pub async fn execute_calls_with(
        &self,
        calls: &[ToolCall],
        options: &CallOptions,
    ) -> Vec<CallResult> {
        let results = join_all(calls.iter().map(|call| self.execute_call(call, options))).await;
        calls
            .iter()
            .cloned()
            .zip(results)
            .map(|(call, result)| CallResult { call, result })
            .collect()
    }

    /// This executor's tools, declared for one API.
    pub fn declarations(&self, format: Format, options: &DeclareOptions) -> Declarations {
        provider::declare(self.tools(), format, options)
    }
}
