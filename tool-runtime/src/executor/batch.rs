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
    /// Each call's id is its own: the options' `call_id` is not given to the calls without
    /// one (several calls would report one id).
    pub async fn execute_calls_with(
        &self,
        calls: &[ToolCall],
        options: &CallOptions,
    ) -> Vec<CallResult> {
        let mut options = options.clone();
        options.call_id = None;
        let options = &options;
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::DynamicTool;

    fn tool<F, Fut>(name: &str, call: F) -> DynamicTool
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        DynamicTool::new(name, "A test tool", schema, move |args, _| call(args))
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: Some(format!("call_{name}")),
            name: name.into(),
            arguments,
        }
    }

    #[tokio::test]
    async fn each_call_reports_its_own_id_and_none_takes_the_batchs() {
        let exec = Executor::builder()
            .registered_tools(false)
            .tool_with(
                DynamicTool::new(
                    "id",
                    "Says its call's id",
                    json!({ "type": "object" }),
                    |_, ctx| {
                        let id = ctx.call_id().unwrap_or("none").to_owned();
                        async move { Ok(ToolOutput::text(id)) }
                    },
                ),
                |tool| tool.timeout(Duration::from_micros(500)),
            )
            .build()
            .unwrap();
        // Half a millisecond is kept as one, not as none.
        assert_eq!(exec.spec("id").unwrap().metadata.timeout_ms, Some(1));
        let mut calls = vec![call("id", json!({})), call("id", json!({}))];
        calls[1].id = None;
        let options = CallOptions::default().with_call_id("batch");
        let texts: Vec<String> = exec
            .execute_calls_with(&calls, &options)
            .await
            .iter()
            .map(|r| r.result.as_ref().unwrap().to_text())
            .collect();
        assert_eq!(texts, ["call_id", "none"]);
    }

    #[tokio::test(start_paused = true)]
    async fn results_come_in_call_order_whatever_order_the_calls_end_in() {
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(tool("wait", |args| async move {
                let n = args["n"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(100 - 10 * n)).await;
                Ok(ToolOutput::text(n.to_string()))
            }))
            .build()
            .unwrap();
        let calls: Vec<ToolCall> = (0..5).map(|n| call("wait", json!({ "n": n }))).collect();
        let results = exec.execute_calls(&calls).await;
        let texts: Vec<String> = results
            .iter()
            .map(|r| r.result.as_ref().unwrap().to_text())
            .collect();
        assert_eq!(texts, ["0", "1", "2", "3", "4"]);
        let ids: Vec<_> = results.iter().map(|r| r.call.id.clone()).collect();
        assert!(ids.iter().all(|id| id.as_deref() == Some("call_wait")));
    }

    #[tokio::test]
    async fn every_call_of_a_batch_sees_the_extensions_of_its_options() {
        struct Tenant(&'static str);
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(DynamicTool::new(
                "whose",
                "Names the tenant",
                json!({"type": "object"}),
                |_, ctx| async move {
                    // Read from a task of its own, through a kept copy of the context.
                    let kept = ctx.to_static();
                    let tenant =
                        tokio::spawn(
                            async move { kept.extension::<Tenant>().map(|t| t.0.to_owned()) },
                        );
                    let tenant = tenant.await.unwrap_or_default();
                    Ok(ToolOutput::text(tenant.unwrap_or_else(|| "none".into())))
                },
            ))
            .build()
            .unwrap();
        let calls: Vec<ToolCall> = (0..3).map(|_| call("whose", json!({}))).collect();
        let options = CallOptions::default().with_extension(Tenant("acme"));
        let texts: Vec<String> = exec
            .execute_calls_with(&calls, &options)
            .await
            .iter()
            .map(|r| r.result.as_ref().unwrap().to_text())
            .collect();
        assert_eq!(texts, ["acme", "acme", "acme"]);
        let without = exec.execute_calls(&calls[..1]).await;
        assert_eq!(without[0].result.as_ref().unwrap().to_text(), "none");
    }

    #[tokio::test]
    async fn one_call_failing_leaves_the_others_alone() {
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(tool("ok", |_| async { Ok(ToolOutput::text("fine")) }))
            .tool(tool("boom", |_| async { panic!("boom") }))
            .build()
            .unwrap();
        let calls = [
            call("ok", json!({})),
            call("boom", json!({})),
            call("missing", json!({})),
            call("ok", json!({"n": "not a number"})),
            call("ok", json!("{\"n\": 1}")),
        ];
        let results = exec.execute_calls(&calls).await;
        let kinds: Vec<_> = results
            .iter()
            .map(|r| {
                r.result
                    .as_ref()
                    .map(ToolOutput::to_text)
                    .map_err(ToolError::kind)
            })
            .collect();
        use tool_core::ToolErrorKind as K;
        assert_eq!(
            kinds,
            [
                Ok("fine".to_owned()),
                Err(K::Panicked),
                Err(K::UnknownTool),
                Err(K::InvalidArguments),
                Ok("fine".to_owned()),
            ]
        );
    }
}
