//! A served call's questions to the user ([`ToolContext::elicit`](tool_runtime::ToolContext::elicit)),
//! sent to the session's client as `elicitation/create`, when the client declared it can
//! answer them.

use std::sync::Arc;

use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tool_runtime::{Elicitation, Elicited, Elicitor};

/// The elicitor of a call from `peer`: `None` when the client did not declare elicitation
/// (the tool is then told it cannot ask).
pub(crate) fn elicitor(peer: &Peer<RoleServer>) -> Option<Elicitor> {
    // Form elicitation: declared as `form`, or as `elicitation: {}` (before modes existed).
    let declared = peer.peer_info().is_some_and(|info| {
        info.capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    });
    if !declared {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |question: Elicitation| {
        let peer = peer.clone();
        Box::pin(async move { ask(&peer, question).await })
    }))
}

/// Sends the question and reads the answer.
async fn ask(peer: &Peer<RoleServer>, question: Elicitation) -> Result<Elicited, String> {
    let requested_schema = serde_json::from_value(question.schema).map_err(|e| {
        format!(
            "the schema is not one MCP elicitation takes (an object of primitive properties): {e}"
        )
    })?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message,
        requested_schema,
    };
    let answer = peer
        .create_elicitation(params)
        .await
        .map_err(|e| format!("the client did not answer elicitation/create: {e}"))?;
    Ok(match answer.action {
        ElicitationAction::Accept => Elicited::Accepted(
            answer
                .content
                .unwrap_or_else(|| Value::Object(Default::default())),
        ),
        ElicitationAction::Decline => Elicited::Declined,
        _ => Elicited::Cancelled,
    })
}
