//! A tool's requests to a model during a run ([`ToolContext::sample`](tool_runtime::ToolContext::sample)),
//! answered by the run's own model when the agent says so
//! ([`AgentBuilder::answer_sampling`](crate::AgentBuilder::answer_sampling)): the request's
//! messages and instructions, no tools, its token cap (held to the agent's) as the answer's.
//! The tokens it uses are not the run's usage.

use std::sync::Arc;

use tool_model::message::Message;
use tool_model::{ChatModel, Generation, ModelRequest};
use tool_runtime::{Sampled, Sampler, SamplingRequest, Speaker};

/// The sampler of a run on `model`, holding each request to `cap` tokens.
pub(crate) fn sampler(model: Arc<dyn ChatModel>, cap: u32) -> Sampler {
    Arc::new(move |request: SamplingRequest| {
        let model = Arc::clone(&model);
        Box::pin(async move { ask(&*model, request, cap).await })
    })
}

async fn ask(model: &dyn ChatModel, request: SamplingRequest, cap: u32) -> Result<Sampled, String> {
    let messages = (request.messages.into_iter())
        .map(|(speaker, text)| match speaker {
            Speaker::User => Message::user(text),
            Speaker::Assistant => Message::assistant(text),
        })
        .collect();
    let mut asked = ModelRequest::new(messages);
    asked.instructions = request.system;
    asked.generation = Generation::new().max_tokens(request.max_tokens.min(cap));
    let answer = model
        .respond(&asked)
        .await
        .map_err(|e| format!("the run's model failed: {e}"))?;
    Ok(Sampled {
        text: answer.text.unwrap_or_default(),
        model: model.model_name().to_owned(),
        stop_reason: None,
    })
}
