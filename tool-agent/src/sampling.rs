//! A tool's requests to a model during a run ([`ToolContext::sample`](tool_runtime::ToolContext::sample)),
//! answered by the run's own model: the request's messages and instructions, no tools, its
//! token cap as the answer's. The tokens it uses are the model API's to count, not the run's
//! usage.

use std::sync::Arc;

use tool_model::message::Message;
use tool_model::{ChatModel, Generation, ModelRequest};
use tool_runtime::{Sampled, Sampler, SamplingRequest, Speaker};

/// The sampler of a run on `model`.
pub(crate) fn sampler(model: Arc<dyn ChatModel>) -> Sampler {
    Arc::new(move |request: SamplingRequest| {
        let model = Arc::clone(&model);
        Box::pin(async move { ask(&*model, request).await })
    })
}

async fn ask(model: &dyn ChatModel, request: SamplingRequest) -> Result<Sampled, String> {
    let messages = (request.messages.into_iter())
        .map(|(speaker, text)| match speaker {
            Speaker::User => Message::user(text),
            Speaker::Assistant => Message::assistant(text),
        })
        .collect();
    let mut asked = ModelRequest::new(messages);
    asked.instructions = request.system;
    asked.generation = Generation::new().max_tokens(request.max_tokens);
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
