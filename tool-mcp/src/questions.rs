//! A server's questions to the user (`elicitation/create`) and requests to a model
//! (`sampling/createMessage`) during an imported call, passed on to that call's caller
//! ([`ToolContext::elicit`], [`ToolContext::sample`]), when the import forwards them
//! ([`ImportLimits::forward_elicitation`](crate::ImportLimits::forward_elicitation),
//! [`ImportLimits::forward_sampling`](crate::ImportLimits::forward_sampling)).
//!
//! MCP names no call in a question, so a question is passed on only while exactly one call is
//! in flight on the connection, and its caller can answer; with several (a gateway serving
//! many users through one upstream connection), passing it on could ask one user another's
//! question, so the server is answered with an error instead. Every forwarded call counts,
//! whether its caller can answer or not, and is counted from before its request is sent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tool_runtime::{Elicited, Sampled, SamplingRequest, ToolContext};

/// The calls in flight on the connection.
#[derive(Default)]
pub(crate) struct Questions {
    calls: Mutex<Vec<(u64, ToolContext<'static>)>>,
    next: AtomicU64,
}

impl Questions {
    /// Counts the call of `ctx` as in flight, and routes questions to it, until the returned
    /// guard is dropped.
    pub(crate) fn route(self: &Arc<Self>, ctx: &ToolContext<'static>) -> QuestionRoute {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, ctx.clone()));
        QuestionRoute {
            questions: Arc::clone(self),
            id,
        }
    }

    /// Asks the caller of the one call in flight, when it can answer.
    pub(crate) async fn ask(&self, message: &str, schema: Value) -> Result<Elicited, String> {
        let ctx = match self.lock().as_slice() {
            [(_, ctx)] if ctx.can_elicit() => ctx.clone(),
            [] | [_] => return Err("no call in flight on this connection can ask its user".into()),
            _ => {
                return Err(
                    "several calls are in flight on this connection and the question \
                            names none: it is not passed on, so that no user is asked another's \
                            question"
                        .into(),
                )
            }
        };
        // The reason stays here: it may quote the user's answer, which is not the server's.
        ctx.elicit(message, schema).await.map_err(|e| {
            tracing::warn!(error = %e, "a forwarded question was not answered");
            "the user's answer could not be passed on".to_owned()
        })
    }

    /// Asks the model of the one call in flight's caller, when it can answer.
    pub(crate) async fn sample(&self, request: SamplingRequest) -> Result<Sampled, String> {
        let ctx = match self.lock().as_slice() {
            [(_, ctx)] if ctx.can_sample() => ctx.clone(),
            [] | [_] => return Err("no call in flight on this connection can ask a model".into()),
            _ => {
                return Err(
                    "several calls are in flight on this connection and the request names \
                     none: it is not passed on, so that no caller's model answers another's"
                        .into(),
                )
            }
        };
        ctx.sample(request).await.map_err(|e| {
            tracing::warn!(error = %e, "a forwarded sampling request was not answered");
            "the caller's model did not answer".to_owned()
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, ToolContext<'static>)>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps a call's questions routed to it while it lives.
pub(crate) struct QuestionRoute {
    questions: Arc<Questions>,
    id: u64,
}

impl Drop for QuestionRoute {
    fn drop(&mut self) {
        self.questions.lock().retain(|(id, _)| *id != self.id);
    }
}
