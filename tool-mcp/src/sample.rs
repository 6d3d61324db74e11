//! A served call's requests to a model ([`ToolContext::sample`](tool_runtime::ToolContext::sample)),
//! sent to the session's client as `sampling/createMessage`, when the client declared it can
//! answer them.
//!
//! rmcp marks sampling deprecated: SEP-2577 retires server-to-client requests after
//! 2025-11-25, whose clients still answer them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::CreateMessageRequestParams;
use rmcp::service::{Peer, RoleServer};
use serde_json::{json, Value};
use tool_runtime::{Sampled, Sampler, SamplingRequest, Speaker};

/// The sampler of a call from `peer`: `None` when the client did not declare sampling (the
/// tool is then told it cannot ask a model).
pub(crate) fn sampler(peer: &Peer<RoleServer>) -> Option<Sampler> {
    let declared = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.sampling.is_some());
    if !declared {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |request: SamplingRequest| {
        let peer = peer.clone();
        Box::pin(async move { ask(&peer, request).await })
    }))
}

/// The request as MCP has it: text messages, the instructions, the token cap.
fn params(request: &SamplingRequest) -> Result<CreateMessageRequestParams, String> {
    let messages: Vec<Value> = (request.messages.iter())
        .map(|(speaker, text)| {
            let role = match speaker {
                Speaker::User => "user",
                Speaker::Assistant => "assistant",
            };
            json!({ "role": role, "content": { "type": "text", "text": text } })
        })
        .collect();
    let mut params = json!({ "messages": messages, "maxTokens": request.max_tokens });
    if let Some(system) = &request.system {
        params["systemPrompt"] = json!(system);
    }
    serde_json::from_value(params).map_err(|e| format!("not a sampling request MCP takes: {e}"))
}

/// Sends the request and reads the answer's text.
async fn ask(peer: &Peer<RoleServer>, request: SamplingRequest) -> Result<Sampled, String> {
    let answer = peer
        .create_message(params(&request)?)
        .await
        .map_err(|e| format!("the client did not answer sampling/createMessage: {e}"))?;
    let wire = serde_json::to_value(&answer).map_err(|e| e.to_string())?;
    let text = match &wire["content"] {
        Value::Object(block) => block.get("text").and_then(Value::as_str).map(str::to_owned),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
    .ok_or("the client's answer has no text")?;
    Ok(Sampled {
        text,
        model: answer.model,
        stop_reason: answer.stop_reason,
    })
}
