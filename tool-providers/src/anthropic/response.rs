//! A whole Messages answer: its text, calls and usage, how it ended (`stop_reason`), and what
//! of its content goes back with it (its thinking, or all of it beside the blocks of the tools
//! Anthropic runs).

use serde_json::Value;
use tool_core::provider::{Aliases, Format};

use super::PROVIDER;
use tool_model::message::{Reasoning, Usage};
use tool_model::{Ending, ModelError, ModelResponse};

/// The text, calls and usage of a Messages answer.
pub(super) fn response(answer: &Value, aliases: &Aliases) -> Result<ModelResponse, ModelError> {
    let calls = crate::assemble::answer_calls(PROVIDER, Format::Anthropic, answer, aliases)?;
    let text: String = answer
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let count = |name: &str| {
        answer
            .pointer(&format!("/usage/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let cached = count("cache_read_input_tokens");
    let usage = Usage {
        requests: 1,
        // Anthropic counts cached and newly cached input apart from `input_tokens`.
        input_tokens: count("input_tokens")
            .saturating_add(cached)
            .saturating_add(count("cache_creation_input_tokens")),
        output_tokens: count("output_tokens"),
        cached_input_tokens: cached,
        reasoning_tokens: 0,
    };
    let content = answer.get("content").and_then(Value::as_array);
    let blocks = content.into_iter().flatten().cloned().collect();
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        calls,
        usage,
        ending: ending(answer.get("stop_reason").and_then(Value::as_str)),
        finish_reason: answer
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        reasoning: kept(
            blocks,
            answer.pointer("/container/id").and_then(Value::as_str),
        ),
    })
}

/// What Anthropic's `stop_reason` says of how the answer ended.
pub(crate) fn ending(reason: Option<&str>) -> Ending {
    match reason {
        Some("max_tokens" | "model_context_window_exceeded") => Ending::CutAtLimit,
        Some("refusal") => Ending::Declined,
        Some("pause_turn") => Ending::Paused,
        _ => Ending::Whole,
    }
}

/// The API's name in a [`Reasoning`] it gave.
pub(super) const REASONING_API: &str = "anthropic";

/// Whether a content block is extended thinking, which goes back as it came.
fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// Whether a content block is text or a call, which a neutral [`Message::Assistant`] holds,
/// or thinking: any other (a `server_tool_use` and its `web_search_tool_result`,
/// `code_execution_tool_result`...) is the work of a tool Anthropic runs, which must go back
/// as it came.
///
/// [`Message::Assistant`]: tool_model::message::Message::Assistant
pub(super) fn is_neutral(block: &Value) -> bool {
    let kind = block.get("type").and_then(Value::as_str);
    // A call made by code the model ran names its caller, which must go back with it.
    let by_code = block
        .pointer("/caller/type")
        .and_then(Value::as_str)
        .is_some_and(|caller| caller != "direct");
    (matches!(kind, Some("text" | "tool_use" | CONTAINER)) && !by_code) || is_thinking(block)
}

/// The kept block naming the answer's container (`{"type": "container", "id"}`): not content,
/// but the sandbox the next request must name (`container`) for the code that called tools
/// to go on.
pub(super) const CONTAINER: &str = "container";

/// The container a kept block names, if it is one.
pub(super) fn container_of(block: &Value) -> Option<&str> {
    (block.get("type").and_then(Value::as_str) == Some(CONTAINER))
        .then(|| block.get("id").and_then(Value::as_str))
        .flatten()
}

/// Whether a content block is a call of one of the request's tools.
pub(super) fn is_call(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_use")
}

/// Whether a content block is text of white space alone, which Anthropic refuses.
pub(super) fn is_blank_text(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text")
        && block
            .get("text")
            .and_then(Value::as_str)
            .is_none_or(|text| text.trim().is_empty())
}

/// What of an answer's content goes back with it ([`Message::Reasoning`]): its thinking
/// blocks; or, when it holds blocks of the tools Anthropic runs, the whole content as it
/// came, in order (citations in its text included), which a paused turn (`pause_turn`) must
/// be sent back as, and which Anthropic reads back in later turns.
///
/// [`Message::Reasoning`]: tool_model::message::Message::Reasoning
pub(super) fn kept(blocks: Vec<Value>, container: Option<&str>) -> Option<Reasoning> {
    let mut blocks: Vec<Value> = if blocks.iter().all(is_neutral) {
        blocks.into_iter().filter(is_thinking).collect()
    } else {
        blocks
    };
    if let Some(id) = container {
        blocks.push(serde_json::json!({ "type": CONTAINER, "id": id }));
    }
    Reasoning::given(REASONING_API, blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::tests::kept_whole;
    use serde_json::json;
    use tool_core::ToolCall;

    #[test]
    fn text_calls_and_usage_are_read_from_the_answer() {
        let answer = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [
                { "type": "text", "text": "Adding." },
                { "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1, "b": 2 } }
            ],
            "usage": { "input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 100 }
        });
        let response = response(&answer, &Aliases::default()).unwrap();
        assert_eq!(response.text.as_deref(), Some("Adding."));
        assert_eq!(
            response.calls,
            vec![ToolCall::new("t1", "add", json!({ "a": 1, "b": 2 }))]
        );
        assert_eq!(response.usage.input_tokens, 120);
        assert_eq!(response.usage.cached_input_tokens, 100);
        assert_eq!(response.usage.output_tokens, 7);
        assert_eq!(response.finish_reason.as_deref(), Some("tool_use"));
    }

    #[test]
    fn an_answer_without_server_tool_blocks_keeps_only_its_thinking() {
        let thinking = json!({ "type": "thinking", "thinking": "hm", "signature": "s" });
        let answer = json!({ "stop_reason": "tool_use", "content": [
            thinking,
            { "type": "text", "text": "Adding." },
            { "type": "tool_use", "id": "t1", "name": "add", "input": {} }
        ] });
        let response = response(&answer, &Aliases::default()).unwrap();
        assert_eq!(kept_whole(&response), json!([thinking]));
        let plain =
            json!({ "stop_reason": "end_turn", "content": [{ "type": "text", "text": "Hi." }] });
        assert_eq!(response_reasoning(&plain), None);
    }

    fn response_reasoning(answer: &Value) -> Option<Reasoning> {
        response(answer, &Aliases::default()).unwrap().reasoning
    }
}
