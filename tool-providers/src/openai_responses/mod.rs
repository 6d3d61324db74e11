//! OpenAI Responses over HTTP. Tools are declared and calls parsed by `tool-core`'s provider
//! module; this module writes the input items (`function_call` and `function_call_output`)
//! and reads the text and usage, whole or streamed. Stateless: the whole transcript is sent
//! each time, with the reasoning items the API encrypted for it when asked to
//! ([`OpenAiResponsesModel::with_encrypted_reasoning`]).

mod messages;
mod stream;

use reqwest::header::AUTHORIZATION;
use serde_json::{json, Map, Value};
use tool_core::provider::{Aliases, Declarations, Format};

use messages::items;
pub(crate) use stream::stream_decoder;

use crate::http::{json_headers, ApiKey, JsonPost};
use crate::model::{not_taken, HttpModel};
use crate::sse;
use tool_model::message::{Reasoning, Usage};
use tool_model::{ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, ToolChoice};
use tool_model::{Ending, ModelEventStream};

const PROVIDER: &str = "OpenAI Responses";

/// The API named on the reasoning this client keeps ([`Reasoning::api`]).
const REASONING_API: &str = "openai_responses";

/// A [`ChatModel`] speaking OpenAI Responses (`POST {base_url}/responses`), with the key from
/// `OPENAI_API_KEY` unless set in code.
///
/// ```
/// use tool_providers::OpenAiResponsesModel;
///
/// let model = OpenAiResponsesModel::new("gpt-5-mini");
/// assert_eq!(model.url(), "https://api.openai.com/v1/responses");
/// ```
pub type OpenAiResponsesModel = HttpModel<OpenAiResponses>;

/// OpenAI Responses, the API of [`OpenAiResponsesModel`].
#[derive(Clone, Debug)]
pub struct OpenAiResponses {
    url: String,
    /// Whether requests ask for the reasoning items' encrypted content.
    encrypted_reasoning: bool,
}

impl crate::model::sealed::Api for OpenAiResponses {
    const NAME: &'static str = "OpenAiResponsesModel";

    fn set_base_url(model: &mut HttpModel<Self>, base_url: &str) {
        model.api.url = responses_url(base_url);
    }

    fn url(model: &HttpModel<Self>) -> &str {
        &model.api.url
    }
}

impl OpenAiResponsesModel {
    /// A client for `model` at OpenAI's endpoint, with the key in `OPENAI_API_KEY` if set.
    pub fn new(model: impl Into<String>) -> Self {
        let api = OpenAiResponses {
            url: responses_url("https://api.openai.com/v1"),
            encrypted_reasoning: false,
        };
        HttpModel::with_api(api, model.into(), ApiKey::from_env("OPENAI_API_KEY"))
    }

    /// Asks for the encrypted content of the model's reasoning (`include:
    /// ["reasoning.encrypted_content"]`) and sends each answer's reasoning items back with it,
    /// so that a reasoning model (o3, o4-mini, the GPT-5 family) goes on from what it thought
    /// before its calls rather than thinking again at every step. Requests are sent with
    /// `store: false`, so the API keeps nothing between them: without the encrypted content,
    /// the reasoning is lost. For reasoning models only: others refuse the `include`.
    ///
    /// With `with_body_field("store", json!(true))` the API keeps the items itself, and they
    /// go back as they came, encrypted or not.
    pub fn with_encrypted_reasoning(mut self) -> Self {
        self.api.encrypted_reasoning = true;
        self
    }

    /// The request body for `request`.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let declarations = request
            .tools
            .declarations_or_declare(Format::OpenAiResponses);
        let aliases = &declarations.aliases;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        if let Some(instructions) = &request.instructions {
            body.insert("instructions".into(), json!(instructions));
        }
        // The API keeps a reasoning item only when asked to store it; one it does not keep
        // goes back with its encrypted content, or not at all.
        let stored = self.extra.get("store") == Some(&Value::Bool(true));
        let source = self.reasoning_source();
        let search = declares_client_search(&declarations).then_some(&*declarations);
        let input: Vec<Value> = (0..request.messages.len())
            .flat_map(|i| items(&request.messages, i, aliases, search, stored, &source))
            .collect();
        body.insert("input".into(), Value::Array(input));
        body.insert("store".into(), json!(false));
        if self.api.encrypted_reasoning {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        if let Some(format) = &request.response_format {
            body.insert("text".into(), format.openai_responses());
        }
        let generation = self.generation_for(request);
        if let Some(max_tokens) = generation.max_tokens {
            body.insert("max_output_tokens".into(), json!(max_tokens));
        }
        if let Some(temperature) = generation.finite_temperature() {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(top_p) = generation.finite_top_p() {
            body.insert("top_p".into(), json!(top_p));
        }
        if !generation.stop.is_empty() {
            not_taken(PROVIDER, "stop");
        }
        if generation.seed.is_some() {
            not_taken(PROVIDER, "seed");
        }
        if request.offers_tools() {
            body.insert("tools".into(), declarations.tools.clone());
            let choice = match &request.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Required => json!("required"),
                ToolChoice::None => json!("none"),
                ToolChoice::Tool(name) => named(name, aliases),
                ToolChoice::Allowed(names, mode) => {
                    let tools: Vec<Value> = names.iter().map(|name| named(name, aliases)).collect();
                    json!({
                        "type": "allowed_tools",
                        "mode": crate::allowed::mode(*mode),
                        "tools": tools
                    })
                }
            };
            body.insert("tool_choice".into(), choice);
            if let Some(parallel) = request.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), json!(parallel));
            }
        }
        for (name, value) in &self.extra {
            body.insert(name.clone(), value.clone());
        }
        // An `include` of the user's own keeps the encrypted reasoning asked for beside it.
        if self.api.encrypted_reasoning {
            if let Some(Value::Array(include)) = body.get_mut("include") {
                let asked = json!("reasoning.encrypted_content");
                if !include.contains(&asked) {
                    include.push(asked);
                }
            }
        }
        Value::Object(body)
    }

    /// Who reads this client's encrypted reasoning back: its endpoint and model (an
    /// organization's key encrypts it; another endpoint's would refuse it).
    fn reasoning_source(&self) -> String {
        format!("{} {}", self.api.url, self.model)
    }

    fn post(&self, body: Value) -> Result<JsonPost<'_>, ModelError> {
        crate::http::key_needed(
            self.api_key.as_ref(),
            &self.headers,
            "authorization",
            &self.api.url,
            "api.openai.com",
            "OPENAI_API_KEY",
        )?;
        let body = serde_json::to_vec(&body)
            .map_err(|e| ModelError::Setup(format!("the request is not JSON: {e}")))?;
        let headers =
            self.headers
                .apply(json_headers(self.api_key.as_ref(), AUTHORIZATION, true)?)?;
        Ok(JsonPost {
            client: &self.client,
            url: &self.api.url,
            headers,
            body,
            retry: self.retry,
            provider: PROVIDER,
            sign: None,
        })
    }
}

fn responses_url(base_url: &str) -> String {
    format!("{}/responses", base_url.trim_end_matches('/'))
}

/// The text, calls and usage of a Responses answer.
fn response(answer: &Value, aliases: &Aliases, source: &str) -> Result<ModelResponse, ModelError> {
    let calls = crate::assemble::answer_calls(PROVIDER, Format::OpenAiResponses, answer, aliases)?;
    let output = answer
        .get("output")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let text: String = output
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    // A refusal is a part of its own: it is the answer's text, and the reason it ended.
    let refusal: String = output
        .iter()
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("refusal"))
        .filter_map(|part| part.get("refusal").and_then(Value::as_str))
        .collect();
    let refused = !refusal.is_empty();
    let text = if text.is_empty() { refusal } else { text };
    let thought: Vec<Value> = output
        .iter()
        .filter(|item| is_kept(item))
        .cloned()
        .collect();
    let count = |pointer: &str| answer.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let usage = Usage {
        requests: 1,
        input_tokens: count("/usage/input_tokens"),
        output_tokens: count("/usage/output_tokens"),
        cached_input_tokens: count("/usage/input_tokens_details/cached_tokens"),
        reasoning_tokens: count("/usage/output_tokens_details/reasoning_tokens"),
    };
    Ok(ModelResponse {
        reasoning: Reasoning::given_by(REASONING_API, source, thought),
        text: (!text.is_empty()).then_some(text),
        calls,
        usage,
        ending: if refused {
            Ending::Declined
        } else {
            ending(finish_reason(answer).as_deref())
        },
        finish_reason: if refused {
            Some("refusal".to_owned())
        } else {
            finish_reason(answer)
        },
    })
}

/// What a Responses answer's finish reason (its `status`, or an incomplete one's reason; a
/// refusal read as `refusal`) says of how it ended.
pub(crate) fn ending(reason: Option<&str>) -> Ending {
    match reason {
        Some("max_output_tokens") => Ending::CutAtLimit,
        Some("content_filter" | "refusal") => Ending::Declined,
        _ => Ending::Whole,
    }
}

/// A tool by name, as a choice names it: a function, or a custom tool.
fn named(name: &str, aliases: &Aliases) -> Value {
    json!({ "type": aliases.tool_kind(name), "name": aliases.provider_name(name) })
}

/// Whether the declarations hold a tool search the client runs.
fn declares_client_search(declarations: &Declarations) -> bool {
    declarations.tools.as_array().is_some_and(|tools| {
        tools.iter().any(|tool| {
            tool.get("type").and_then(Value::as_str) == Some("tool_search")
                && tool.get("execution").and_then(Value::as_str) == Some("client")
        })
    })
}

/// Whether an output item is a reasoning item.
fn is_reasoning(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("reasoning")
}

/// Whether an output item goes back with the answer as it came: a reasoning item, or an item
/// of a search the server ran (`tool_search_call`, `tool_search_output`), which holds the
/// tools it loaded.
fn is_kept(item: &Value) -> bool {
    let kind = item.get("type").and_then(Value::as_str);
    is_reasoning(item)
        || (matches!(kind, Some("tool_search_call" | "tool_search_output"))
            && item.get("execution").and_then(Value::as_str) != Some("client"))
}

/// A Responses answer's finish reason: its `status`, or for an `incomplete` one the reason
/// (`max_output_tokens`, `content_filter`).
fn finish_reason(response: &Value) -> Option<String> {
    let status = response.get("status").and_then(Value::as_str)?;
    let reason = response
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str);
    match (status, reason) {
        ("incomplete", Some(reason)) => Some(reason.to_owned()),
        _ => Some(status.to_owned()),
    }
}

impl ChatModel for OpenAiResponsesModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self.post(self.body(request))?.send().await?;
            let aliases = request.tools.aliases_for(Format::OpenAiResponses);
            response(&answer, &aliases, &self.reasoning_source())
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let opening = Box::pin(async move {
            let mut body = self.body(request);
            body["stream"] = json!(true);
            self.post(body)?.open().await
        });
        let aliases = request
            .tools
            .aliases_for(Format::OpenAiResponses)
            .into_owned();
        let decoder = stream_decoder(aliases, self.reasoning_source());
        sse::events(opening, self.api.url.clone(), decoder)
    }

    fn format(&self) -> Option<Format> {
        Some(Format::OpenAiResponses)
    }

    fn model_name(&self) -> &str {
        &self.model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::ToolCall;
    use tool_model::message::Message;

    /// The endpoint and model these tests' reasoning comes from.
    pub(super) const HERE: &str = "http://openai.test/v1/responses gpt-5-mini";

    #[test]
    fn an_incomplete_answer_says_why_and_a_refusal_is_its_text() {
        let cut = json!({ "status": "incomplete",
            "incomplete_details": { "reason": "max_output_tokens" },
            "output": [{ "type": "message", "content": [{ "type": "output_text", "text": "Par" }] }] });
        let parsed = response(&cut, &Aliases::default(), HERE).unwrap();
        assert_eq!(parsed.finish_reason.as_deref(), Some("max_output_tokens"));
        let refused = json!({ "status": "completed",
            "output": [{ "type": "message", "content": [{ "type": "refusal", "refusal": "No." }] }] });
        let parsed = response(&refused, &Aliases::default(), HERE).unwrap();
        assert_eq!(parsed.text.as_deref(), Some("No."));
        assert_eq!(parsed.finish_reason.as_deref(), Some("refusal"));
    }

    pub(super) fn rs(id: &str, encrypted: Option<&str>) -> Value {
        let mut item = json!({ "type": "reasoning", "id": id, "summary": [] });
        if let Some(content) = encrypted {
            item["encrypted_content"] = json!(content);
        }
        item
    }

    #[test]
    fn encrypted_reasoning_is_asked_for_only_when_wanted() {
        let request = ModelRequest::new(vec![Message::User { text: "Hi".into() }]);
        let plain = OpenAiResponsesModel::new("gpt-4.1").body(&request);
        assert_eq!(plain.get("include"), None);
        let theirs = OpenAiResponsesModel::new("gpt-5-mini")
            .with_body_field("include", json!(["message.output_text.logprobs"]))
            .with_encrypted_reasoning()
            .body(&request);
        assert_eq!(
            theirs["include"],
            json!([
                "message.output_text.logprobs",
                "reasoning.encrypted_content"
            ])
        );
        let reasoning = OpenAiResponsesModel::new("gpt-5-mini")
            .with_encrypted_reasoning()
            .body(&request);
        assert_eq!(reasoning["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(reasoning["store"], json!(false));
    }

    #[test]
    fn reasoning_items_are_kept_whole_and_streamed() {
        let answer = json!({ "status": "completed", "output": [
            rs("rs_1", Some("gAAA")),
            { "type": "function_call", "call_id": "fc_1", "name": "add", "arguments": "{}" }
        ] });
        let kept = response(&answer, &Aliases::default(), HERE)
            .unwrap()
            .reasoning;
        let expected = Some(Reasoning {
            api: REASONING_API.into(),
            source: Some(HERE.into()),
            blocks: vec![rs("rs_1", Some("gAAA"))],
        });
        assert_eq!(kept, expected);

        let mut decoder = stream_decoder(Aliases::default(), HERE.into());
        let mut deltas = Vec::new();
        let events = [
            json!({ "type": "response.output_item.added", "output_index": 0, "item": rs("rs_1", None) }),
            json!({ "type": "response.output_item.done", "output_index": 0, "item": rs("rs_1", Some("gAAA")) }),
            json!({ "type": "response.completed", "response": { "status": "completed" } }),
        ];
        for event in events {
            decoder.data(&event.to_string(), &mut deltas).unwrap();
        }
        assert_eq!(decoder.finish().reasoning, expected);
    }

    #[test]
    fn the_servers_search_goes_back_with_the_answer_it_led_to() {
        let search = json!({ "type": "tool_search_call", "id": "ts_1", "execution": "server",
            "status": "completed", "arguments": { "query": "weather" } });
        let loaded = json!({ "type": "tool_search_output", "id": "to_1", "execution": "server",
            "status": "completed", "tools": [] });
        let call = json!({ "type": "function_call", "call_id": "fc_1", "name": "get_weather",
            "arguments": "{}" });
        let answer = json!({ "status": "completed",
            "output": [search.clone(), loaded.clone(), call.clone()] });
        let model = OpenAiResponsesModel::new("gpt-5.4");
        let parsed = response(&answer, &Aliases::default(), &model.reasoning_source()).unwrap();
        let kept = parsed.reasoning.clone().expect("the search's items");
        assert_eq!(kept.blocks, [search.clone(), loaded.clone()]);
        // Not stored (`store: false`): they go back all the same, before the call.
        let messages = vec![
            Message::user("Weather?"),
            Message::Reasoning(kept),
            Message::Assistant {
                text: None,
                calls: parsed.calls,
            },
        ];
        let mut request = ModelRequest::new(messages);
        request.messages.push(Message::user("And tomorrow?"));
        let body = model.body(&request);
        assert_eq!(
            body["input"].as_array().unwrap()[1..4],
            [
                search,
                loaded,
                json!({ "type": "function_call", "call_id": "fc_1", "name": "get_weather", "arguments": "{}" })
            ]
        );
    }

    #[test]
    fn text_calls_and_usage_are_read_from_the_answer() {
        let answer = json!({
            "id": "resp_1", "object": "response", "status": "completed",
            "output": [
                { "type": "reasoning", "id": "rs_1", "summary": [] },
                { "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "Adding." }] },
                { "type": "function_call", "call_id": "fc_1", "name": "add", "arguments": "{\"a\":1,\"b\":2}" }
            ],
            "usage": { "input_tokens": 30, "output_tokens": 20,
                "input_tokens_details": { "cached_tokens": 10 },
                "output_tokens_details": { "reasoning_tokens": 12 } }
        });
        let response = response(&answer, &Aliases::default(), HERE).unwrap();
        assert_eq!(response.text.as_deref(), Some("Adding."));
        assert_eq!(
            response.calls,
            vec![ToolCall::new("fc_1", "add", json!({ "a": 1, "b": 2 }))]
        );
        assert_eq!(response.usage.reasoning_tokens, 12);
        assert_eq!(response.usage.cached_input_tokens, 10);
    }
}
