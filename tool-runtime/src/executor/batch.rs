//! Running the tool calls of one model response.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

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
        let futures: Vec<_> = calls
            .iter()
            .map(|call| Box::pin(self.execute_call(call, options)))
            .collect();
        let results = JoinAll::new(futures).await;
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

/// Polls every future until all are done; outputs in the order given.
struct JoinAll<F: Future> {
    futures: Vec<Option<Pin<Box<F>>>>,
    outputs: Vec<Option<F::Output>>,
}

impl<F: Future> JoinAll<F> {
    fn new(futures: Vec<Pin<Box<F>>>) -> Self {
        let outputs = futures.iter().map(|_| None).collect();
        JoinAll {
            futures: futures.into_iter().map(Some).collect(),
            outputs,
        }
    }
}

impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let mut pending = false;
        for (slot, output) in this.futures.iter_mut().zip(this.outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            return Poll::Pending;
        }
        Poll::Ready(this.outputs.iter_mut().filter_map(Option::take).collect())
    }
}
