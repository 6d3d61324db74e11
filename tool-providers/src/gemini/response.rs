//! A whole `generateContent` answer: its text, calls and usage, how it ended (`finishReason`,
//! or a blocked prompt's `blockReason`), and the thought signatures of its parts.

use serde_json::{json, Value};
use tool_core::provider::{Aliases, Format};

use super::PROVIDER;
use tool_model::message::{Reasoning, Usage};
use tool_model::{Ending, ModelError, ModelResponse};

/// The text, calls and usage of a `generateContent` answer.
pub(super) fn response(
    answer: &Value,
    aliases: &Aliases,
    source: &str,
) -> Result<ModelResponse, ModelError> {
    let calls = crate::assemble::answer_calls(PROVIDER, Format::Gemini, answer, aliases)?;
    let candidate = answer.pointer("/candidates/0");
    let text: String = candidate
        .and_then(|c| c.pointer("/content/parts"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        // Thought summaries are not the answer.
        .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let usage = usage(answer);
    let parts = candidate
        .and_then(|c| c.pointer("/content/parts"))
        .and_then(Value::as_array);
    let mut signatures = Signatures::default();
    parts.into_iter().flatten().for_each(|p| signatures.read(p));
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        calls,
        usage,
        ending: ending(finish_reason(answer).as_deref()),
        finish_reason: finish_reason(answer),
        reasoning: signatures.reasoning(source),
    })
}

/// Why an answer (or a stream's chunk) ended: its candidate's `finishReason`, or for a prompt
/// Gemini blocked, `blocked: ` and the `blockReason` of its `promptFeedback` (there is no
/// candidate then), a refusal whatever the reason (`OTHER` included).
pub(super) fn finish_reason(answer: &Value) -> Option<String> {
    if let Some(reason) = answer.pointer("/candidates/0/finishReason") {
        return reason.as_str().map(str::to_owned);
    }
    let blocked = answer.pointer("/promptFeedback/blockReason")?.as_str()?;
    Some(format!("{BLOCKED}{blocked}"))
}

/// What begins the finish reason of a prompt Gemini blocked.
const BLOCKED: &str = "blocked: ";

/// What Gemini's `finishReason` (or a prompt's `blockReason`) says of how the answer ended:
/// Vertex AI's `MODEL_ARMOR` and every filter is a refusal, a call written wrong or of a tool
/// not given is no call.
pub(crate) fn ending(reason: Option<&str>) -> Ending {
    match reason {
        Some(blocked) if blocked.starts_with(BLOCKED) => Ending::Declined,
        Some("MAX_TOKENS") => Ending::CutAtLimit,
        Some(
            "SAFETY"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION"
            | "MODEL_ARMOR"
            | "LANGUAGE",
        ) => Ending::Declined,
        Some("MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL") => Ending::MalformedCall,
        _ => Ending::Whole,
    }
}

/// The API's name in a [`Reasoning`] it gave.
pub(super) const REASONING_API: &str = "gemini";

/// The thought signatures of an answer's parts, each with the part it was on: Gemini 3
/// refuses a conversation whose function calls come back without theirs.
#[derive(Debug, Default)]
pub(super) struct Signatures {
    /// `{"thoughtSignature": .., "call": n}` or `{"thoughtSignature": .., "text": true}`.
    blocks: Vec<Value>,
    /// The function calls read so far.
    calls: usize,
}

impl Signatures {
    /// Reads one part of the answer, in order.
    pub(super) fn read(&mut self, part: &Value) {
        let is_call = part.get("functionCall").is_some();
        if let Some(signature) = part.get("thoughtSignature").filter(|s| s.is_string()) {
            self.blocks.push(if is_call {
                json!({ "thoughtSignature": signature, "call": self.calls })
            } else {
                json!({ "thoughtSignature": signature, "text": true })
            });
        }
        if is_call {
            self.calls += 1;
        }
    }

    pub(super) fn reasoning(&mut self, source: &str) -> Option<Reasoning> {
        Reasoning::given_by(REASONING_API, source, std::mem::take(&mut self.blocks))
    }
}

/// The signature a block of `blocks` gives the answer's call `index`, or its text (`None`).
pub(super) fn signature_of(blocks: &[Value], index: Option<usize>) -> Option<&Value> {
    blocks
        .iter()
        .find(|block| match index {
            Some(n) => block.get("call").and_then(Value::as_u64) == Some(n as u64),
            None => block.get("text").is_some(),
        })
        .and_then(|block| block.get("thoughtSignature"))
}

/// The usage of an answer (or of a stream's chunk).
pub(super) fn usage(answer: &Value) -> Usage {
    let count = |name: &str| {
        answer
            .pointer(&format!("/usageMetadata/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let thoughts = count("thoughtsTokenCount");
    Usage {
        requests: 1,
        input_tokens: count("promptTokenCount"),
        output_tokens: count("candidatesTokenCount").saturating_add(thoughts),
        cached_input_tokens: count("cachedContentTokenCount"),
        reasoning_tokens: thoughts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemini::tests::HERE;

    #[test]
    fn a_blocked_prompt_says_why() {
        let blocked = json!({ "promptFeedback": { "blockReason": "OTHER" } });
        let parsed = response(&blocked, &Aliases::default(), HERE).unwrap();
        assert_eq!(parsed.text, None);
        assert_eq!(parsed.finish_reason.as_deref(), Some("blocked: OTHER"));
        let ending = parsed.ending;
        assert_eq!(ending, tool_model::Ending::Declined);
    }

    #[test]
    fn text_calls_and_usage_are_read_from_the_answer() {
        let answer = json!({
            "candidates": [{ "finishReason": "STOP", "content": { "role": "model", "parts": [
                { "text": "thinking...", "thought": true },
                { "text": "Adding." },
                { "functionCall": { "name": "add", "args": { "a": 1, "b": 2 } } }
            ]}}],
            "usageMetadata": { "promptTokenCount": 40, "candidatesTokenCount": 8, "thoughtsTokenCount": 5, "cachedContentTokenCount": 16 }
        });
        let response = response(&answer, &Aliases::default(), HERE).unwrap();
        assert_eq!(response.text.as_deref(), Some("Adding."));
        assert_eq!(response.calls.len(), 1);
        assert_eq!(response.calls[0].arguments, json!({ "a": 1, "b": 2 }));
        assert_eq!(response.usage.output_tokens, 13);
        assert_eq!(response.usage.reasoning_tokens, 5);
        assert_eq!(response.usage.cached_input_tokens, 16);
        assert_eq!(response.finish_reason.as_deref(), Some("STOP"));
    }
}
