//! [`Remote`]: one tool of an imported server, as its calls need it. A call is forwarded with
//! its cancellation (`notifications/cancelled` when the caller stops waiting) and, when the
//! caller wants them, the server's progress reports.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService};
use serde_json::Value;
use tool_core::{ToolError, ToolOutput};
use tool_runtime::ToolContext;

use crate::awaited::{self, Ended};
use crate::client::{ClientState, ImportClient};
use crate::convert::{output_from_result, result_text};
use crate::trace_context;
use rmcp::model::InputResponses;
use tool_runtime::Elicited;
use tracing::Instrument;

/// One tool of a server.
pub(crate) struct Remote {
    pub(crate) state: Arc<ClientState>,
    /// The tool's name on the server.
    pub(crate) name: String,
    pub(crate) peer: Peer<RoleClient>,
    /// Keeps the connection open while the tool lives.
    pub(crate) _connection: Arc<RunningService<RoleClient, ImportClient>>,
}

impl Remote {
    /// Forwards a call. Dropping this future (time limit, cancellation) sends the server
    /// `notifications/cancelled`.
    pub(crate) async fn call(
        &self,
        args: Value,
        ctx: ToolContext<'static>,
    ) -> Result<ToolOutput, ToolError> {
        let failed = |message: String| ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message,
            error: None,
            source: None,
        };
        let token = ctx.cancellation_token().clone();
        let cancelled = || ToolError::Cancelled {
            tool: ctx.tool_name().to_owned(),
        };
        let server = &self.state.server;
        let answered = async {
            // A server of 2026-07-28 asks its questions by answering `input_required`: they
            // go to this call's caller, and the call is made again with the answers.
            let mut round: Option<(InputResponses, Option<String>)> = None;
            let mut rounds = 0;
            let response = loop {
                let response = self.authorized(&args, round.take(), &ctx).await?;
                match response {
                    ServerResult::InputRequiredResult(asked) if rounds < MAX_ROUNDS => {
                        rounds += 1;
                        let requests = asked.input_requests.unwrap_or_default();
                        let answers = self
                            .answers(requests, &ctx)
                            .await
                            .map_err(|message| failed(format!("MCP server {server}: {message}")))?;
                        round = Some((answers, asked.request_state));
                    }
                    other => break other,
                }
            };
            let result = match response {
                // A long call the server runs as a task: waited on here, under the caller's
                // time limit and cancellation.
                ServerResult::CreateTaskResult(created) => {
                    match awaited::task_ended(&self.peer, created, &ctx).await {
                        Ended::Result(result) => result,
                        Ended::Failed(message) => {
                            return Err(failed(format!("MCP server {server}: {message}")))
                        }
                        Ended::Cancelled => return Err(cancelled()),
                    }
                }
                other => call_result(other).map_err(|other| {
                    failed(format!(
                        "MCP server {server} answered tools/call with something other than a \
                         result: {other}"
                    ))
                })?,
            };
            match result.is_error {
                Some(true) => Err(failed(result_text(&result))),
                _ => Ok(output_from_result(result)),
            }
        };
        tokio::select! {
            answer = answered => answer,
            () = token.cancelled() => Err(cancelled()),
        }
    }

    /// Sends the call (with a round's answers) and waits for its response. A call refused for
    /// want of authorization (`401`, or `403` for a scope) did not run: it is made again once
    /// the import has authorized, when it authorizes.
    async fn authorized(
        &self,
        args: &Value,
        round: Option<(InputResponses, Option<String>)>,
        ctx: &ToolContext<'static>,
    ) -> Result<ServerResult, ToolError> {
        let server = &self.state.server;
        let failed = |message: String| ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message: format!("MCP server {server}: {message}"),
            error: None,
            source: None,
        };
        let mut attempts = 0;
        loop {
            let seen = self.state.authorization();
            let e = match self.forward(args.clone(), round.clone(), ctx).await {
                Ok(response) => return Ok(response),
                Err(e) => e,
            };
            if attempts < crate::MAX_AUTHORIZATIONS_PER_REQUEST {
                attempts += 1;
                match self.state.authorized_again(&e, seen).await {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(refused) => return Err(failed(format!("authorizing failed: {refused}"))),
                }
            }
            return Err(failed(crate::urls::scrub_urls(&e.to_string())));
        }
    }

    /// The caller's answers to a round's requests: questions asked of its user (when the
    /// import passes questions on), requests to its model (when it passes sampling on).
    /// MCP names the call in a round, so they go to this call's caller alone.
    async fn answers(
        &self,
        requests: rmcp::model::InputRequests,
        ctx: &ToolContext<'static>,
    ) -> Result<InputResponses, String> {
        let server = &self.state.server;
        let limits = &self.state.limits;
        if requests.len() > MAX_REQUESTS_PER_ROUND {
            return Err(format!(
                "it asks for {} inputs in one round; at most {MAX_REQUESTS_PER_ROUND} are passed on",
                requests.len()
            ));
        }
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            let wire = serde_json::to_value(&request).map_err(|e| e.to_string())?;
            let params = &wire["params"];
            let answer = match wire["method"].as_str() {
                Some("elicitation/create") if limits.forward_elicitation => {
                    let message = params["message"].as_str().unwrap_or_default();
                    let message = format!("The MCP server {server} asks: {message}");
                    let schema = params["requestedSchema"].clone();
                    let answer = ctx.elicit(&message, schema).await.map_err(|e| {
                        tracing::warn!(error = %e, "a forwarded question was not answered");
                        "the user's answer could not be passed on".to_owned()
                    })?;
                    match answer {
                        Elicited::Accepted(content) => {
                            serde_json::json!({ "action": "accept", "content": content })
                        }
                        Elicited::Declined => serde_json::json!({ "action": "decline" }),
                        Elicited::Cancelled => serde_json::json!({ "action": "cancel" }),
                    }
                }
                #[allow(deprecated)] // sampling: deprecated by SEP-2577
                Some("sampling/createMessage") if limits.forward_sampling => {
                    let params: rmcp::model::CreateMessageRequestParams =
                        serde_json::from_value(params.clone()).map_err(|e| e.to_string())?;
                    let request = crate::client::sampling_request(&params)?;
                    let answer = ctx
                        .sample(request)
                        .await
                        .map_err(|_| "the caller's model did not answer".to_owned())?;
                    let mut result = serde_json::json!({
                        "role": "assistant",
                        "content": { "type": "text", "text": answer.text },
                        "model": answer.model,
                    });
                    if let Some(reason) = answer.stop_reason {
                        result["stopReason"] = reason.into();
                    }
                    result
                }
                method => {
                    return Err(format!(
                        "it asks for input (`{}`) this import does not pass on \
                         (ImportLimits::with_forwarded_elicitation, with_forwarded_sampling)",
                        method.unwrap_or("?")
                    ))
                }
            };
            answers.insert(key, answer);
        }
        Ok(answers)
    }

    /// Sends the request and waits for its response, routing its progress to `ctx` when the
    /// caller wants progress.
    async fn forward(
        &self,
        args: Value,
        round: Option<(InputResponses, Option<String>)>,
        ctx: &ToolContext<'static>,
    ) -> Result<ServerResult, rmcp::service::ServiceError> {
        let mut params = CallToolRequestParams::new(self.name.clone());
        params.arguments = match args {
            Value::Object(map) => Some(map),
            _ => None,
        };
        if let Some((answers, state)) = round {
            params.input_responses = Some(answers);
            params.request_state = state;
        }
        let mut meta = rmcp::model::MetaObject::new();
        let span = trace_context::sent_call(&self.state.server, &self.name, &mut meta);
        if !meta.0.is_empty() {
            params.meta = Some(meta.into());
        }
        let sent = self.send(params, ctx).instrument(span.clone()).await;
        match &sent {
            Ok(ServerResult::CallToolResult(result)) if result.is_error == Some(true) => {
                trace_context::failed(&span, "tool_error")
            }
            Ok(_) => {}
            Err(_) => trace_context::failed(&span, "mcp_error"),
        }
        sent
    }

    /// Sends a `tools/call` request and waits for its response.
    async fn send(
        &self,
        params: CallToolRequestParams,
        ctx: &ToolContext<'static>,
    ) -> Result<ServerResult, rmcp::service::ServiceError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // Counted as in flight before the server can read the request, so that a question it
        // asks at once finds this call, and no other ([`crate::questions`]).
        let _questions = (self.state.limits.forward_elicitation
            || self.state.limits.forward_sampling)
            .then(|| self.state.questions.route(ctx));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        // rmcp gives every request a progress token; the route is made before the server can
        // have read the request, so no report is missed.
        let _route = ctx.wants_progress().then(|| {
            self.state
                .route_progress(handle.progress_token.clone(), ctx.clone())
        });
        let mut abandoned = CancelOnDrop(Some((self.peer.clone(), handle.id.clone())));
        let response = handle.await_response().await;
        abandoned.0 = None;
        response
    }
}

/// The most `input_required` rounds one call goes through.
const MAX_ROUNDS: usize = 10;

/// The most inputs (questions, requests to a model) one round may ask of the caller.
const MAX_REQUESTS_PER_ROUND: usize = 8;

/// A `tools/call` response as a result. A result without `content` is read by rmcp as
/// another kind (empty, or custom): it is an empty result, or the call result it holds.
/// Anything else is its JSON text.
fn call_result(response: ServerResult) -> Result<CallToolResult, String> {
    let text = |r: &ServerResult| serde_json::to_string(r).unwrap_or_default();
    match response {
        ServerResult::CallToolResult(result) => Ok(result),
        ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
        ServerResult::CustomResult(custom) => serde_json::from_value(custom.0.clone())
            .map_err(|_| text(&ServerResult::CustomResult(custom))),
        other => Err(text(&other)),
    }
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting.
struct CancelOnDrop(Option<(Peer<RoleClient>, RequestId)>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = "the caller stopped waiting".to_owned();
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                    .await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(value: Value) -> ServerResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_result_without_content_is_empty_and_another_answer_is_refused() {
        let empty = call_result(response(json!({}))).unwrap();
        assert!(empty.content.is_empty() && empty.is_error != Some(true));
        let full = call_result(response(
            json!({ "content": [{ "type": "text", "text": "hi" }] }),
        ));
        assert_eq!(result_text(&full.unwrap()), "hi");
        let other = call_result(response(json!({ "tools": [] }))).unwrap_err();
        assert!(other.contains("tools"), "{other}");
    }
}
