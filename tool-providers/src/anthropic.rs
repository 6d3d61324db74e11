//! Anthropic Messages over HTTP. Tools are declared and calls parsed by `tool-core`'s provider
//! module; this module writes the messages (a call's results go back as one user message of
//! `tool_result` blocks) and reads the text and usage, whole or streamed.

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{json, Map, Value};
use tool_core::provider::{anthropic_tool_result_content, Aliases, Format};

use crate::assemble::StreamedAnswer;
#[cfg(feature = "vertex")]
use crate::google::vertex::env;
use crate::google::vertex::Vertex;
use crate::http::{json_headers, ApiKey, ExtraHeaders, JsonPost, RetryPolicy};
use crate::sse::{self, Decoder};
use crate::tool_ids::ToolUseIds;
#[cfg(feature = "vertex")]
use crate::GoogleCredentials;
use tool_model::message::{
    grow_text, has_tool_turns, reasoning_before, Message, Reasoning, ToolImage, Usage,
};
use tool_model::{
    ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, PromptCache, ToolChoice,
};
use tool_model::{Ending, ModelEventStream};

const PROVIDER: &str = "Anthropic";

/// A [`ChatModel`] speaking Anthropic Messages (`POST {base_url}/messages`).
///
/// The API key comes from `ANTHROPIC_API_KEY` unless set with
/// [`AnthropicModel::with_api_key`]; it is sent as `x-api-key`, never logged, and `Debug`
/// shows only whether there is one. `max_tokens`, which the API requires, is 4,096 unless set.
///
/// ```
/// use tool_providers::AnthropicModel;
///
/// let model = AnthropicModel::new("claude-sonnet-4-5").with_max_tokens(1024);
/// assert_eq!(model.url(), "https://api.anthropic.com/v1/messages");
/// ```
///
/// [`AnthropicModel::vertex_ai`] speaks to Claude on Vertex AI, with Google Cloud
/// credentials:
///
/// ```
/// use tool_providers::AnthropicModel;
///
/// let model = AnthropicModel::vertex_ai("claude-sonnet-4-5@20250929")
///     .with_vertex_project("my-project")
///     .with_vertex_location("us-east5");
/// assert_eq!(
///     model.url(),
///     "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/\
///      publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
/// );
/// ```
#[derive(Clone)]
pub struct AnthropicModel {
    client: crate::http::HttpClient,
    url: String,
    /// Where a streamed answer is asked for: `url`, but on Vertex AI.
    stream_url: String,
    model: String,
    api_key: Option<ApiKey>,
    headers: ExtraHeaders,
    retry: RetryPolicy,
    max_tokens: u32,
    cache: Option<PromptCache>,
    extra: Map<String, Value>,
    /// Vertex AI's project, location and credentials, for Claude there.
    vertex: Option<Vertex>,
}

impl AnthropicModel {
    /// Anthropic's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com/v1";
    /// The API version sent in `anthropic-version`.
    pub const API_VERSION: &'static str = "2023-06-01";
    /// The API version Vertex AI is sent, in the body's `anthropic_version`.
    pub const VERTEX_API_VERSION: &'static str = "vertex-2023-10-16";

    /// A client for `model` at [`AnthropicModel::DEFAULT_BASE_URL`], with the key in
    /// `ANTHROPIC_API_KEY` if it is set.
    pub fn new(model: impl Into<String>) -> Self {
        AnthropicModel {
            client: crate::http::default_client(),
            url: messages_url(Self::DEFAULT_BASE_URL),
            stream_url: messages_url(Self::DEFAULT_BASE_URL),
            model: model.into(),
            api_key: ApiKey::from_env("ANTHROPIC_API_KEY"),
            headers: ExtraHeaders::default(),
            retry: RetryPolicy::default(),
            max_tokens: 4096,
            cache: None,
            extra: Map::new(),
            vertex: None,
        }
    }

    /// A client for `model` (such as `claude-sonnet-4-5@20250929`) on Vertex AI, as
    /// Anthropic's `AnthropicVertex` client finds it: the region in `CLOUD_ML_REGION`, the
    /// project in `ANTHROPIC_VERTEX_PROJECT_ID` (else the credentials', as
    /// [`GoogleCredentials::project`] finds it), the root in `ANTHROPIC_VERTEX_BASE_URL`
    /// (else the region's), and requests authorized with the environment's Application
    /// Default Credentials ([`GoogleCredentials`]). A request goes to
    /// `{root}/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`
    /// (`streamRawPredict` streamed), with the model out of the body and `anthropic_version`
    /// in it. Without a project or a region, the first request fails with
    /// [`ModelError::Setup`] and nothing is sent.
    #[cfg(feature = "vertex")]
    pub fn vertex_ai(model: impl Into<String>) -> Self {
        let mut client = AnthropicModel::new(model);
        client.api_key = None;
        let mut vertex = Vertex::new(
            GoogleCredentials::from_env(),
            env("ANTHROPIC_VERTEX_PROJECT_ID"),
            env("CLOUD_ML_REGION"),
            "set ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT) and CLOUD_ML_REGION, or call \
             AnthropicModel::with_vertex_project and with_vertex_location",
        );
        // The SDK's base URL, with its version (`https://host/v1`).
        vertex.set_base(env("ANTHROPIC_VERTEX_BASE_URL"));
        client.vertex = Some(vertex);
        client.aim_at_vertex();
        client
    }

    #[cfg(feature = "vertex")]
    crate::google::vertex::vertex_setters!();

    /// The endpoint's base URL, with its version path (`https://api.anthropic.com/v1`); on
    /// Vertex AI too (`https://host/v1`, as `AnthropicVertex` takes it), under which the
    /// project and location go.
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        match &mut self.vertex {
            Some(vertex) => {
                vertex.set_base(Some(base_url.to_owned()));
                self.aim_at_vertex();
            }
            None => {
                self.url = messages_url(base_url);
                self.stream_url = self.url.clone();
            }
        }
        self
    }

    /// The URLs of the Vertex AI model, from its settings.
    fn aim_at_vertex(&mut self) {
        if let Some(vertex) = &self.vertex {
            // A base URL given holds its version, as the SDK's does.
            let base = match vertex.given_base() {
                Some(base) => base.trim_end_matches('/').to_owned(),
                None => format!("{}/v1", vertex.root()),
            };
            let model = format!(
                "{base}/{}/publishers/anthropic/models/{}",
                vertex.project_location(),
                self.model
            );
            self.url = format!("{model}:rawPredict");
            self.stream_url = format!("{model}:streamRawPredict");
        }
    }

    crate::http::client_setters!("`ANTHROPIC_API_KEY`");

    /// A field added to every request body (`thinking`, `metadata`, `service_tier`...). A field the client writes itself
    /// (`model`, `messages`, `system`, `tools`, `tool_choice`, `output_config`, `stream`) is replaced by it: set those through the request instead.
    pub fn with_body_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }

    /// The most tokens an answer may have.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Caches each request's prefix (tools, system prompt, messages so far): the request's
    /// top-level `cache_control`, which marks its last cacheable block. A run's later steps
    /// then read the earlier ones from the cache, billed as cached input
    /// ([`Usage::cached_input_tokens`](tool_model::Usage::cached_input_tokens)).
    pub fn with_prompt_cache(mut self, cache: PromptCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The tool choice Anthropic takes: with extended thinking on, only `auto` and `none`
    /// (a forced call is refused with a 400), so a required or named tool is asked as `auto`.
    fn choice_taken<'c>(&self, choice: &'c ToolChoice) -> &'c ToolChoice {
        let thinking = self
            .extra
            .get("thinking")
            .and_then(|thinking| thinking.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind != "disabled");
        match choice {
            ToolChoice::Required | ToolChoice::Tool(_) if thinking => {
                tracing::warn!(
                    choice = ?choice,
                    "Anthropic takes no forced tool choice with extended thinking: asked as auto"
                );
                &ToolChoice::Auto
            }
            other => other,
        }
    }

    /// The request body for `request`.
    pub fn body(&self, request: &ModelRequest) -> Value {
        // At the step limit no tool is offered, yet Anthropic refuses `tool_use` and
        // `tool_result` blocks in a request without tools: they are declared, and not chosen.
        let history_has_tools = has_tool_turns(&request.messages);
        let declarations = request.declarations_for(Format::Anthropic);
        let aliases = &declarations.aliases;
        let mut body = Map::new();
        match self.vertex {
            // Vertex AI takes the model in the URL, and the version in the body.
            Some(_) => body.insert("anthropic_version".into(), json!(Self::VERTEX_API_VERSION)),
            None => body.insert("model".into(), json!(self.model)),
        };
        body.insert("max_tokens".into(), json!(self.max_tokens));
        let output_config = request.response_format.as_ref().map(|f| (f, f.anthropic()));
        match output_config {
            Some((format, None)) => {
                // A schema structured output cannot take as it is: it goes into the system
                // prompt, and the answer is checked all the same.
                let system = format.in_instructions(request.instructions.as_deref());
                body.insert("system".into(), json!(system));
            }
            _ => {
                if let Some(instructions) = &request.instructions {
                    body.insert("system".into(), json!(instructions));
                }
            }
        }
        if let Some((_, Some(config))) = output_config {
            body.insert("output_config".into(), config);
        }
        // `request.temperature` is not sent: the Messages API has no sampling parameters.
        match self.cache {
            Some(PromptCache::FiveMinutes) => {
                body.insert("cache_control".into(), json!({ "type": "ephemeral" }));
            }
            Some(PromptCache::OneHour) => {
                let control = json!({ "type": "ephemeral", "ttl": "1h" });
                body.insert("cache_control".into(), control);
            }
            None => {}
        }
        body.insert("messages".into(), messages(&request.messages, aliases));
        if request.offers_tools() {
            body.insert("tools".into(), declarations.tools.clone());
            let mut choice = tool_choice(self.choice_taken(&request.tool_choice), aliases);
            if let (Some(parallel), Some(choice)) =
                (request.parallel_tool_calls, choice.as_object_mut())
            {
                choice.insert("disable_parallel_tool_use".into(), json!(!parallel));
            }
            body.insert("tool_choice".into(), choice);
        } else if history_has_tools {
            body.insert("tools".into(), declarations.tools.clone());
            body.insert("tool_choice".into(), json!({ "type": "none" }));
        }
        for (name, value) in &self.extra {
            body.insert(name.clone(), value.clone());
        }
        Value::Object(body)
    }

    async fn post<'a>(&'a self, url: &'a str, body: Value) -> Result<JsonPost<'a>, ModelError> {
        let body = serde_json::to_vec(&body)
            .map_err(|e| ModelError::Setup(format!("the request is not JSON: {e}")))?;
        // On Vertex AI, Google's credentials authorize a request, never an Anthropic key.
        let key = match (&self.vertex, &self.api_key) {
            (Some(_), Some(_)) => {
                return Err(ModelError::Setup(
                    "Claude on Vertex AI is authorized by Google credentials, not an API key: \
                     leave with_api_key out"
                        .to_owned(),
                ))
            }
            (Some(_), None) => None,
            (None, key) => key.as_ref(),
        };
        if self.vertex.is_none() {
            crate::http::key_needed(
                key,
                &self.headers,
                "x-api-key",
                url,
                "api.anthropic.com",
                "ANTHROPIC_API_KEY",
            )?;
        }
        let mut headers = json_headers(key, HeaderName::from_static("x-api-key"), false)?;
        match &self.vertex {
            Some(vertex) => vertex.authorize(&mut headers).await?,
            None => {
                headers.insert(
                    HeaderName::from_static("anthropic-version"),
                    HeaderValue::from_static(Self::API_VERSION),
                );
            }
        }
        let headers = self.headers.apply(headers)?;
        Ok(JsonPost {
            client: &self.client,
            url,
            headers,
            body,
            retry: self.retry,
            provider: PROVIDER,
            sign: None,
        })
    }
}

fn messages_url(base_url: &str) -> String {
    format!("{}/messages", base_url.trim_end_matches('/'))
}

/// The characters of Anthropic's tool use ids (`^[a-zA-Z0-9_-]+$`).
fn anthropic_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
}

/// The neutral messages as Anthropic's: results of one answer's calls go together in one user
/// message of `tool_result` blocks; call ids as Anthropic takes them (another API's model may
/// have written any, or none).
fn messages(messages: &[Message], aliases: &Aliases) -> Value {
    let mut ids = ToolUseIds::new(anthropic_id_char);
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |results: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({ "role": "user", "content": std::mem::take(results) }));
        }
    };
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::Tool {
                call_id,
                text,
                is_error,
                images,
                ..
            } => {
                // Anthropic refuses a failed result without content.
                let text = match text.as_str() {
                    "" if *is_error && images.is_empty() => "Error",
                    text => text,
                };
                let images = images.iter().map(ToolImage::parts);
                let content = anthropic_tool_result_content(text, images);
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": ids.of_result(call_id.as_deref()),
                    "content": content,
                });
                if *is_error {
                    block["is_error"] = json!(true);
                }
                results.push(block);
            }
            Message::User { text } => {
                flush(&mut results, &mut out);
                out.push(json!({ "role": "user", "content": text }));
            }
            // Sent with the answer after it.
            Message::Reasoning(_) => {}
            Message::Assistant { text, calls } => {
                let kept = reasoning_before(messages, i, REASONING_API, None);
                // An answer with blocks of the tools Anthropic runs was kept whole: it goes
                // back as it came (a paused turn may hold nothing else).
                let whole = kept.iter().any(|block| !is_neutral(block));
                if message.is_empty_answer() && !whole {
                    continue;
                }
                flush(&mut results, &mut out);
                ids.new_turn();
                // Thinking first, as it came: Anthropic checks its signatures. Calls are
                // written from the message, which holds those the run kept.
                let mut content: Vec<Value> = kept
                    .iter()
                    .filter(|block| !is_call(block) && !is_blank_text(block))
                    .cloned()
                    .collect();
                // Anthropic refuses a text block of white space alone.
                let text = text.as_deref().filter(|t| !t.trim().is_empty() && !whole);
                if let Some(text) = text {
                    content.push(json!({ "type": "text", "text": text }));
                }
                for call in calls {
                    let input = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    };
                    content.push(json!({
                        "type": "tool_use",
                        "id": ids.of_call(call.id.as_deref()),
                        "name": aliases.provider_name(&call.name),
                        "input": input,
                    }));
                }
                out.push(json!({ "role": "assistant", "content": content }));
            }
        }
    }
    flush(&mut results, &mut out);
    Value::Array(out)
}

fn tool_choice(choice: &ToolChoice, aliases: &Aliases) -> Value {
    match choice {
        ToolChoice::Auto => json!({ "type": "auto" }),
        ToolChoice::Required => json!({ "type": "any" }),
        ToolChoice::None => json!({ "type": "none" }),
        ToolChoice::Tool(name) => json!({ "type": "tool", "name": aliases.provider_name(name) }),
    }
}

/// The text, calls and usage of a Messages answer.
fn response(answer: &Value, aliases: &Aliases) -> Result<ModelResponse, ModelError> {
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
        reasoning: kept(blocks),
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
const REASONING_API: &str = "anthropic";

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
fn is_neutral(block: &Value) -> bool {
    let kind = block.get("type").and_then(Value::as_str);
    matches!(kind, Some("text" | "tool_use")) || is_thinking(block)
}

/// Whether a content block is a call of one of the request's tools.
fn is_call(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_use")
}

/// Whether a content block is text of white space alone, which Anthropic refuses.
fn is_blank_text(block: &Value) -> bool {
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
fn kept(blocks: Vec<Value>) -> Option<Reasoning> {
    let blocks = if blocks.iter().all(is_neutral) {
        blocks.into_iter().filter(is_thinking).collect()
    } else {
        blocks
    };
    Reasoning::given(REASONING_API, blocks)
}

impl ChatModel for AnthropicModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self
                .post(&self.url, self.body(request))
                .await?
                .send()
                .await?;
            let aliases = request.tools.aliases_for(Format::Anthropic);
            response(&answer, &aliases)
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let opening = Box::pin(async move {
            let mut body = self.body(request);
            body["stream"] = json!(true);
            self.post(&self.stream_url, body).await?.open().await
        });
        let aliases = request.tools.aliases_for(Format::Anthropic).into_owned();
        sse::events(opening, self.stream_url.clone(), stream_decoder(aliases))
    }

    fn format(&self) -> Option<Format> {
        Some(Format::Anthropic)
    }

    fn model_name(&self) -> &str {
        &self.model
    }
}

/// What reads a streamed answer's payloads, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases) -> Box<dyn Decoder> {
    Box::new(Streamed {
        answer: StreamedAnswer::new(aliases, ending),
        blocks: Vec::new(),
        stopped: false,
    })
}

/// What a streamed answer's events said so far: `message_start`, content blocks started and
/// grown by deltas (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`,
/// `citations_delta`), `message_delta`, `message_stop`.
#[derive(Default)]
struct Streamed {
    answer: StreamedAnswer,
    /// The content blocks so far, in order, as the whole answer would give them: what goes
    /// back with the answer is read from them ([`kept`]).
    blocks: Vec<StreamedBlock>,
    /// Whether `message_stop` came: a stream without it was cut short.
    stopped: bool,
}

/// A content block as its events built it.
struct StreamedBlock {
    index: Option<u64>,
    block: Value,
    /// Its `input` as JSON text, in the pieces of its `input_json_delta`s (a call's, or a
    /// server tool's).
    input: String,
}

impl Streamed {
    /// The block at `index`, the last started with it.
    fn block(&mut self, index: Option<u64>) -> Option<&mut StreamedBlock> {
        self.blocks.iter_mut().rev().find(|b| b.index == index)
    }

    /// Adds `piece` to the text field `field` of the block at `index`.
    fn grow(&mut self, index: Option<u64>, field: &str, piece: &str) {
        if let Some(StreamedBlock {
            block: Value::Object(block),
            ..
        }) = self.block(index)
        {
            grow_text(block, field, piece);
        }
    }
}

impl Decoder for Streamed {
    fn call_bytes(&self) -> usize {
        self.answer.calls.bytes()
    }

    fn data(&mut self, data: &str, deltas: &mut Vec<String>) -> Result<bool, ModelError> {
        let event: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            provider: PROVIDER,
            message: format!(
                "a streamed event is not JSON ({e}): {}",
                crate::http::body_start(data, 300)
            ),
        })?;
        let index = event.get("index").and_then(Value::as_u64);
        let text =
            |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or_default().to_owned();
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                let count = |name: &str| {
                    event
                        .pointer(&format!("/message/usage/{name}"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                let cached = count("cache_read_input_tokens");
                self.answer.usage.input_tokens = count("input_tokens")
                    .saturating_add(cached)
                    .saturating_add(count("cache_creation_input_tokens"));
                self.answer.usage.cached_input_tokens = cached;
            }
            Some("content_block_start") => {
                let block = event.get("content_block");
                match block.and_then(|b| b.get("type")).and_then(Value::as_str) {
                    Some("tool_use") => self.answer.calls.push(
                        index,
                        block.and_then(|b| b.get("id")).and_then(Value::as_str),
                        block.and_then(|b| b.get("name")).and_then(Value::as_str),
                        None,
                    ),
                    Some("text") => {
                        let start = text(block.and_then(|b| b.get("text")));
                        if !start.is_empty() {
                            self.answer.text.push_str(&start);
                            deltas.push(start);
                        }
                    }
                    _ => {}
                }
                if let Some(block) = block {
                    self.blocks.push(StreamedBlock {
                        index,
                        block: block.clone(),
                        input: String::new(),
                    });
                }
            }
            Some("content_block_delta") => {
                let delta = event.get("delta");
                match delta.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => {
                        let piece = text(delta.and_then(|d| d.get("text")));
                        self.grow(index, "text", &piece);
                        self.answer.text.push_str(&piece);
                        deltas.push(piece);
                    }
                    Some("input_json_delta") => {
                        let piece = delta
                            .and_then(|d| d.get("partial_json"))
                            .and_then(Value::as_str);
                        if let Some(block) = self.block(index) {
                            block.input.push_str(piece.unwrap_or_default());
                        }
                        self.answer.calls.push(index, None, None, piece);
                    }
                    Some("thinking_delta") => {
                        let piece = text(delta.and_then(|d| d.get("thinking")));
                        self.grow(index, "thinking", &piece);
                    }
                    Some("signature_delta") => {
                        let piece = text(delta.and_then(|d| d.get("signature")));
                        self.grow(index, "signature", &piece);
                    }
                    Some("citations_delta") => {
                        let citation = delta.and_then(|d| d.get("citation")).cloned();
                        let block = self.block(index).map(|b| &mut b.block);
                        if let (Some(citation), Some(Value::Object(block))) = (citation, block) {
                            // A start's `"citations": null` (or none) becomes the list.
                            let citations = block.entry("citations").or_insert(Value::Null);
                            if !citations.is_array() {
                                *citations = json!([]);
                            }
                            if let Value::Array(citations) = citations {
                                citations.push(citation);
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.answer.finish_reason = Some(reason.to_owned());
                }
                if let Some(output) = event
                    .pointer("/usage/output_tokens")
                    .and_then(Value::as_u64)
                {
                    self.answer.usage.output_tokens = output;
                }
            }
            Some("message_stop") => {
                self.stopped = true;
                return Ok(true);
            }
            Some("error") => {
                return Err(ModelError::Status {
                    provider: PROVIDER,
                    status: 200,
                    message: text(event.pointer("/error/message")),
                    attempts: 1,
                })
            }
            _ => {}
        }
        Ok(false)
    }

    fn cut_short(&self) -> Option<ModelError> {
        // A call cut short would run with the arguments that came (or none at all).
        (!self.stopped).then(|| ModelError::Malformed {
            provider: PROVIDER,
            message: "the stream ended before its message_stop event".into(),
        })
    }

    fn finish(&mut self) -> ModelResponse {
        let blocks = std::mem::take(&mut self.blocks).into_iter().map(|mut b| {
            // The input its deltas gave, as the whole answer gives it (the start's `{}` when
            // they gave none or it is not JSON).
            let input = serde_json::from_str::<Value>(&b.input).ok();
            if let Value::Object(block) = &mut b.block {
                let is_use = block
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|kind| kind.ends_with("tool_use"));
                match input {
                    Some(input) => {
                        block.insert("input".into(), input);
                    }
                    // A use the API always sends back with an input, which a start without
                    // one and no deltas did not give.
                    None if is_use && !block.contains_key("input") => {
                        block.insert("input".into(), json!({}));
                    }
                    None => {}
                }
            }
            b.block
        });
        self.answer.reasoning = kept(blocks.collect());
        self.answer.finish()
    }
}

impl std::fmt::Debug for AnthropicModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicModel")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("vertex", &self.vertex)
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field("headers", &self.headers)
            .field("retry", &self.retry)
            .field("max_tokens", &self.max_tokens)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::ToolCall;

    fn result(call_id: Option<&str>, text: &str, is_error: bool) -> Message {
        Message::Tool {
            call_id: call_id.map(str::to_owned),
            name: "add".into(),
            text: text.into(),
            is_error,
            images: Vec::new(),
        }
    }

    #[test]
    fn another_apis_call_ids_and_an_empty_failure_go_as_anthropic_takes_them() {
        let mut unnamed = ToolCall::new("x", "add", json!({}));
        unnamed.id = None;
        let transcript = [
            Message::user("add"),
            // A Chat-compatible server's id, and a Gemini call without one.
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("functions.add:0", "add", json!({})), unnamed],
            },
            result(Some("functions.add:0"), "3", false),
            result(None, "", true),
        ];
        let sent = messages(&transcript, &Aliases::default());
        let calls = &sent[1]["content"];
        let results = &sent[2]["content"];
        assert_eq!(calls[0]["id"], "functions_add_0");
        assert_eq!(results[0]["tool_use_id"], "functions_add_0");
        assert_eq!(calls[1]["id"], "call_1");
        assert_eq!(results[1]["tool_use_id"], "call_1");
        // Anthropic refuses a failed result without content.
        assert_eq!(results[1]["is_error"], true);
        assert_ne!(results[1]["content"], "");
    }

    #[test]
    fn results_of_one_answer_go_back_in_one_user_message() {
        let transcript = [
            Message::user("add twice"),
            Message::Assistant {
                text: Some("Sure.".into()),
                calls: vec![
                    ToolCall::new("t1", "add", json!({ "a": 1 })),
                    ToolCall::new("t2", "add", json!({ "a": 2 })),
                ],
            },
            Message::Tool {
                call_id: Some("t1".into()),
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                images: Vec::new(),
            },
            Message::Tool {
                call_id: Some("t2".into()),
                name: "add".into(),
                text: "bad".into(),
                is_error: true,
                images: Vec::new(),
            },
        ];
        assert_eq!(
            messages(&transcript, &Aliases::default()),
            json!([
                { "role": "user", "content": "add twice" },
                { "role": "assistant", "content": [
                    { "type": "text", "text": "Sure." },
                    { "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1 } },
                    { "type": "tool_use", "id": "t2", "name": "add", "input": { "a": 2 } }
                ]},
                { "role": "user", "content": [
                    { "type": "tool_result", "tool_use_id": "t1", "content": "1" },
                    { "type": "tool_result", "tool_use_id": "t2", "content": "bad", "is_error": true }
                ]}
            ])
        );
    }

    /// At the step limit the last request offers no tool, but its history has calls and
    /// results: Anthropic takes them only beside tool definitions, so the tools go with
    /// `tool_choice: none`, or those called when none is offered.
    #[test]
    fn a_request_without_tools_after_calls_declares_them_and_chooses_none() {
        use std::sync::Arc;
        let spec = tool_core::ToolSpec {
            name: "add".into(),
            description: "Adds.".into(),
            parameters: json!({ "type": "object" }),
            output_schema: None,
            metadata: Default::default(),
        };
        let history = vec![
            Message::user("add"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("t1", "add", json!({ "a": 1 }))],
            },
            Message::Tool {
                call_id: Some("t1".into()),
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                images: Vec::new(),
            },
        ];
        let mut request = ModelRequest::new(history);
        request.tools = Arc::new(tool_model::OfferedTools::new(
            vec![spec],
            Some(Format::Anthropic),
            &Default::default(),
        ));
        request.tool_choice = ToolChoice::None;
        let body = AnthropicModel::new("m").body(&request);
        assert_eq!(body["tool_choice"], json!({ "type": "none" }));
        assert_eq!(body["tools"][0]["name"], "add");
        request.tools = Arc::new(tool_model::OfferedTools::none());
        let body = AnthropicModel::new("m").body(&request);
        assert_eq!(
            body["tools"][0]["name"], "add",
            "the tool the history called"
        );
        // Without calls in the history, no tools at all.
        let plain = AnthropicModel::new("m").body(&ModelRequest::new(vec![Message::user("hi")]));
        assert!(plain.get("tools").is_none() && plain.get("tool_choice").is_none());
        // Extended thinking takes no forced call: a required tool is asked as auto.
        request.tools = Arc::new(tool_model::OfferedTools::new(
            vec![tool_core::ToolSpec {
                name: "add".into(),
                description: "Adds.".into(),
                parameters: json!({ "type": "object" }),
                output_schema: None,
                metadata: Default::default(),
            }],
            Some(Format::Anthropic),
            &Default::default(),
        ));
        request.tool_choice = ToolChoice::Required;
        let forced = AnthropicModel::new("m").body(&request);
        assert_eq!(forced["tool_choice"], json!({ "type": "any" }));
        let thinking = json!({ "type": "enabled", "budget_tokens": 2048 });
        let thinking = AnthropicModel::new("m").with_body_field("thinking", thinking);
        assert_eq!(
            thinking.body(&request)["tool_choice"],
            json!({ "type": "auto" })
        );
    }

    #[test]
    fn reasoning_goes_back_only_to_the_api_that_gave_it_and_only_with_its_answer() {
        let thinking = json!({ "type": "thinking", "thinking": "hm", "signature": "s" });
        let transcript = [
            Message::user("hi"),
            Message::Reasoning(Reasoning {
                api: "gemini".into(),
                source: None,
                blocks: vec![json!({ "thoughtSignature": "g", "text": true })],
            }),
            Message::assistant("Hello."),
            Message::user("again"),
            Message::Reasoning(Reasoning {
                api: REASONING_API.into(),
                source: None,
                blocks: vec![thinking.clone()],
            }),
            Message::assistant("Hello again."),
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(
            sent[1]["content"],
            json!([{ "type": "text", "text": "Hello." }])
        );
        assert_eq!(
            sent[3]["content"],
            json!([thinking, { "type": "text", "text": "Hello again." }])
        );
    }

    #[test]
    fn an_empty_answer_is_left_out_and_white_space_is_no_text_block() {
        let transcript = [
            Message::user("hi"),
            Message::Assistant {
                text: Some(" \n".into()),
                calls: Vec::new(),
            },
            Message::user("hello?"),
            Message::Assistant {
                text: Some(" ".into()),
                calls: vec![ToolCall::new("t1", "add", json!({ "a": 1 }))],
            },
        ];
        assert_eq!(
            messages(&transcript, &Aliases::default()),
            json!([
                { "role": "user", "content": "hi" },
                { "role": "user", "content": "hello?" },
                { "role": "assistant", "content": [
                    { "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1 } }
                ]}
            ])
        );
    }

    #[test]
    fn a_results_images_go_with_its_text_in_the_tool_result() {
        let result = Message::Tool {
            call_id: Some("t1".into()),
            name: "chart".into(),
            text: "the chart".into(),
            is_error: false,
            images: vec![tool_model::ToolImage {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
            }],
        };
        assert_eq!(
            messages(&[result], &Aliases::default()),
            json!([{ "role": "user", "content": [{
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [
                    { "type": "text", "text": "the chart" },
                    { "type": "image", "source": {
                        "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="
                    } }
                ]
            }] }])
        );
    }

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

    /// A turn Anthropic paused in a search: text, the search, its results.
    fn paused_content() -> Value {
        json!([
            { "type": "text", "text": "Searching.",
              "citations": [{ "type": "web_search_result_location", "url": "https://a.example",
                              "title": "A", "encrypted_index": "Eo8", "cited_text": "a" }] },
            { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
              "input": { "query": "q" } },
            { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": [{ "type": "web_search_result", "url": "https://a.example",
                            "title": "A", "encrypted_content": "Enc" }] }
        ])
    }

    fn kept_whole(response: &ModelResponse) -> Value {
        let reasoning = response.reasoning.as_ref().expect("the content is kept");
        assert_eq!(reasoning.api, REASONING_API);
        Value::Array(reasoning.blocks.clone())
    }

    #[test]
    fn a_paused_answer_ends_paused_with_its_whole_content_kept() {
        use tool_model::Ending;
        let answer = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "pause_turn",
            "content": paused_content(), "usage": { "input_tokens": 5, "output_tokens": 3 }
        });
        let whole = response(&answer, &Aliases::default()).unwrap();
        assert_eq!(whole.ending, Ending::Paused);
        assert_eq!(whole.text.as_deref(), Some("Searching."));
        assert!(whole.calls.is_empty(), "a server tool's use is no call");
        assert_eq!(kept_whole(&whole), paused_content());

        let content = paused_content();
        let events = [
            json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } }),
            json!({ "type": "content_block_start", "index": 0,
                    "content_block": { "type": "text", "text": "" } }),
            json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "citations_delta", "citation": content[0]["citations"][0] } }),
            json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "text_delta", "text": "Search" } }),
            json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "text_delta", "text": "ing." } }),
            json!({ "type": "content_block_stop", "index": 0 }),
            json!({ "type": "content_block_start", "index": 1, "content_block": {
                "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {} } }),
            json!({ "type": "content_block_delta", "index": 1,
                    "delta": { "type": "input_json_delta", "partial_json": "{\"query\"" } }),
            json!({ "type": "content_block_delta", "index": 1,
                    "delta": { "type": "input_json_delta", "partial_json": ": \"q\"}" } }),
            json!({ "type": "content_block_stop", "index": 1 }),
            json!({ "type": "content_block_start", "index": 2, "content_block": content[2] }),
            json!({ "type": "content_block_stop", "index": 2 }),
            json!({ "type": "message_delta", "delta": { "stop_reason": "pause_turn" },
                    "usage": { "output_tokens": 3 } }),
            json!({ "type": "message_stop" }),
        ];
        let mut decoder = stream_decoder(Aliases::default());
        let mut deltas = Vec::new();
        for event in events {
            decoder.data(&event.to_string(), &mut deltas).unwrap();
        }
        let streamed = decoder.finish();
        assert_eq!(streamed.ending, Ending::Paused);
        assert_eq!(deltas, ["Search", "ing."]);
        assert!(streamed.calls.is_empty(), "a server tool's use is no call");
        assert_eq!(kept_whole(&streamed), paused_content());
    }

    #[test]
    fn a_streamed_block_gets_its_citations_and_a_server_use_its_input_whatever_its_start_said() {
        let citation = json!({ "type": "web_search_result_location", "url": "https://a.example" });
        let events = [
            json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } }),
            json!({ "type": "content_block_start", "index": 0, "content_block": {
                "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search" } }),
            json!({ "type": "content_block_stop", "index": 0 }),
            json!({ "type": "content_block_start", "index": 1,
                    "content_block": { "type": "text", "text": "", "citations": null } }),
            json!({ "type": "content_block_delta", "index": 1,
                    "delta": { "type": "citations_delta", "citation": citation } }),
            json!({ "type": "content_block_delta", "index": 1,
                    "delta": { "type": "text_delta", "text": "Cited." } }),
            json!({ "type": "content_block_stop", "index": 1 }),
            json!({ "type": "message_delta", "delta": { "stop_reason": "pause_turn" },
                    "usage": { "output_tokens": 3 } }),
            json!({ "type": "message_stop" }),
        ];
        let mut decoder = stream_decoder(Aliases::default());
        for event in events {
            decoder.data(&event.to_string(), &mut Vec::new()).unwrap();
        }
        let streamed = decoder.finish();
        assert_eq!(
            kept_whole(&streamed),
            json!([
                { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {} },
                { "type": "text", "text": "Cited.", "citations": [citation] }
            ])
        );
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

    #[test]
    fn a_turn_kept_whole_goes_back_as_it_came_with_the_calls_the_run_kept() {
        let kept = |blocks: Value| {
            Message::Reasoning(Reasoning {
                api: REASONING_API.into(),
                source: None,
                blocks: blocks.as_array().unwrap().clone(),
            })
        };
        // A paused turn of server tools alone: no text, no calls, yet sent, and last.
        let search = Value::Array(paused_content().as_array().unwrap()[1..].to_vec());
        let transcript = [
            Message::user("q?"),
            kept(search.clone()),
            Message::Assistant {
                text: None,
                calls: Vec::new(),
            },
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(sent[1], json!({ "role": "assistant", "content": search }));
        // Its text is the content's own (citations and all), not written again; a call the
        // run did not keep (made with tools turned off) is not sent, one it kept is.
        let mut content = paused_content();
        let call = json!({ "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1 } });
        content.as_array_mut().unwrap().push(call.clone());
        let transcript = [
            Message::user("q?"),
            kept(content.clone()),
            Message::assistant("Searching."),
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(sent[1]["content"], paused_content());
        let transcript = [
            Message::user("q?"),
            kept(content.clone()),
            Message::Assistant {
                text: Some("Searching.".into()),
                calls: vec![ToolCall::new("t1", "add", json!({ "a": 1 }))],
            },
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(sent[1]["content"], content);
    }

    #[test]
    fn a_prompt_cache_is_the_requests_top_level_cache_control() {
        let request = ModelRequest::new(vec![Message::user("hi")]);
        let body = AnthropicModel::new("m").body(&request);
        assert!(body.get("cache_control").is_none(), "{body}");
        let cached = AnthropicModel::new("m").with_prompt_cache(PromptCache::FiveMinutes);
        assert_eq!(
            cached.body(&request)["cache_control"],
            json!({ "type": "ephemeral" })
        );
        let hour = AnthropicModel::new("m").with_prompt_cache(PromptCache::OneHour);
        assert_eq!(
            hour.body(&request)["cache_control"],
            json!({ "type": "ephemeral", "ttl": "1h" })
        );
    }

    #[test]
    fn the_debug_form_shows_no_key() {
        let model = AnthropicModel::new("m").with_api_key(ApiKey::new("sk-ant-secret"));
        assert!(!format!("{model:?}").contains("sk-ant-secret"));
    }

    #[test]
    fn on_vertex_ai_the_model_is_in_the_url_and_the_version_in_the_body() {
        let model = AnthropicModel::vertex_ai("claude-haiku-4-5@20251001")
            .with_vertex_project("p")
            .with_vertex_location("global")
            .with_body_field("metadata", json!({ "user_id": "u" }));
        let root = "https://aiplatform.googleapis.com/v1/projects/p/locations/global";
        let models = format!("{root}/publishers/anthropic/models/claude-haiku-4-5@20251001");
        assert_eq!(model.url, format!("{models}:rawPredict"));
        assert_eq!(model.stream_url, format!("{models}:streamRawPredict"));
        let body = model.body(&ModelRequest::new(vec![Message::user("hi")]));
        assert_eq!(body.get("model"), None);
        assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
        assert_eq!(body["metadata"]["user_id"], "u");
        let moved = model.with_base_url("http://127.0.0.1:9/v1/");
        assert_eq!(
            moved.url,
            "http://127.0.0.1:9/v1/projects/p/locations/global/publishers/anthropic/models/\
             claude-haiku-4-5@20251001:rawPredict"
        );
    }
}
