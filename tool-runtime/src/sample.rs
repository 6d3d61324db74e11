//! Asking a model mid-call: a tool's [`ToolContext::sample`](crate::ToolContext::sample) goes to
//! whoever the caller named ([`CallOptions::with_sampler`](crate::CallOptions::with_sampler)):
//! an MCP server sends the session's client `sampling/createMessage`. A call whose caller named
//! no one gets an error that says so.

use std::sync::Arc;

use crate::boxed::BoxFuture;

/// Who speaks a message of a [`SamplingRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// What a tool asks a model.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The conversation, in order.
    pub messages: Vec<(Speaker, String)>,
    /// Instructions for the model.
    pub system: Option<String>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
}

impl SamplingRequest {
    /// The default of [`SamplingRequest::max_tokens`].
    pub const DEFAULT_MAX_TOKENS: u32 = 1_000;

    /// A request of one user message.
    pub fn new(prompt: impl Into<String>) -> Self {
        SamplingRequest {
            messages: vec![(Speaker::User, prompt.into())],
            system: None,
            max_tokens: Self::DEFAULT_MAX_TOKENS,
        }
    }

    /// The same request with instructions.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// The same request with another cap on the answer's tokens.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// Its text.
    pub text: String,
    /// The model that answered, as the answer names it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, ...), when given.
    pub stop_reason: Option<String>,
}

/// Who a call's requests to a model go to: given the request, the answer, or why there is
/// none.
pub type Sampler =
    Arc<dyn Fn(SamplingRequest) -> BoxFuture<'static, Result<Sampled, String>> + Send + Sync>;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{CallOptions, DynamicTool, Executor};
    use tool_core::ToolOutput;

    #[tokio::test]
    async fn a_request_goes_to_the_sampler_or_fails_saying_none_is_reachable() {
        let tool = DynamicTool::new(
            "summarize",
            "Summarizes.",
            json!({ "type": "object", "properties": {} }),
            |_, ctx| async move {
                let request = SamplingRequest::new("Summarize: a b c").with_system("Be brief.");
                let answer = ctx.sample(request).await?;
                Ok(ToolOutput::text(format!(
                    "{} ({})",
                    answer.text, answer.model
                )))
            },
        );
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(tool)
            .build()
            .unwrap();
        let sampler: Sampler = Arc::new(|request: SamplingRequest| {
            Box::pin(async move {
                assert_eq!(
                    request.messages,
                    [(Speaker::User, "Summarize: a b c".into())]
                );
                assert_eq!(request.system.as_deref(), Some("Be brief."));
                assert_eq!(request.max_tokens, SamplingRequest::DEFAULT_MAX_TOKENS);
                Ok(Sampled {
                    text: "abc".into(),
                    model: "m1".into(),
                    stop_reason: None,
                })
            })
        });
        let options = CallOptions::default().with_sampler(sampler);
        let out = exec.execute_with("summarize", json!({}), &options).await;
        assert_eq!(out.unwrap().to_text(), "abc (m1)");
        let err = exec.execute("summarize", json!({})).await.unwrap_err();
        assert!(err.to_string().contains("cannot ask a model"), "{err}");
    }
}
