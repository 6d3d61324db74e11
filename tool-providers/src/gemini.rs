//! Gemini `generateContent` over HTTP. Tools are declared and calls parsed by `tool-core`'s
//! provider module; this module writes the contents (a call's results go back as one user
//! content of `functionResponse` parts) and reads the text and usage, whole or streamed
//! (`streamGenerateContent` with `alt=sse`).

use reqwest::header::HeaderName;
use serde_json::{json, Map, Value};
use tool_core::provider::{gemini_inline_image, Aliases, Format};

use crate::assemble::StreamedAnswer;
#[cfg(feature = "vertex")]
use crate::google::vertex::env;
use crate::google::vertex::Vertex;
use crate::http::{json_headers, ApiKey, ExtraHeaders, JsonPost, RetryPolicy};
use crate::sse::{self, Decoder};
#[cfg(feature = "vertex")]
use crate::GoogleCredentials;
use tool_model::message::{reasoning_before, Message, Reasoning, ToolImage, Usage};
use tool_model::{ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, ToolChoice};
use tool_model::{Ending, ModelEventStream};

/// The API version Google's Gen AI SDK speaks to Vertex AI.
const VERTEX_API_VERSION: &str = "v1beta1";

const PROVIDER: &str = "Gemini";

/// A [`ChatModel`] speaking Gemini `generateContent`
/// (`POST {base_url}/models/{model}:generateContent`).
///
/// The API key comes from `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) unless set with
/// [`GeminiModel::with_api_key`]; it is sent as `x-goog-api-key`, never in the URL, never
/// logged.
///
/// ```
/// use tool_providers::GeminiModel;
///
/// let model = GeminiModel::new("gemini-2.5-flash");
/// assert_eq!(
///     model.url(),
///     "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
/// );
/// ```
///
/// [`GeminiModel::vertex_ai`] speaks to the same models on Vertex AI, with Google Cloud
/// credentials:
///
/// ```
/// use tool_providers::{GeminiModel, GoogleCredentials};
///
/// let model = GeminiModel::vertex_ai("gemini-2.5-flash")
///     .with_vertex_project("my-project")
///     .with_vertex_location("europe-west4");
/// assert_eq!(
///     model.url(),
///     "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/my-project/locations/\
///      europe-west4/publishers/google/models/gemini-2.5-flash:generateContent"
/// );
/// ```
#[derive(Clone)]
pub struct GeminiModel {
    client: crate::http::HttpClient,
    url: String,
    stream_url: String,
    model: String,
    api_key: Option<ApiKey>,
    headers: ExtraHeaders,
    retry: RetryPolicy,
    extra: Map<String, Value>,
    /// Vertex AI's project, location and credentials, for a model there.
    vertex: Option<Vertex>,
}

impl GeminiModel {
    /// Google's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com/v1beta";

    /// A client for `model` at [`GeminiModel::DEFAULT_BASE_URL`], with the key in
    /// `GEMINI_API_KEY` or `GOOGLE_API_KEY` if one is set.
    pub fn new(model: impl Into<String>) -> Self {
        let model = model.into();
        GeminiModel {
            client: crate::http::default_client(),
            url: content_url(Self::DEFAULT_BASE_URL, &model),
            stream_url: stream_url(Self::DEFAULT_BASE_URL, &model),
            model,
            api_key: ApiKey::from_env("GEMINI_API_KEY")
                .or_else(|| ApiKey::from_env("GOOGLE_API_KEY")),
            headers: ExtraHeaders::default(),
            retry: RetryPolicy::default(),
            extra: Map::new(),
            vertex: None,
        }
    }

    /// A client for `model` on Vertex AI, as Google's Gen AI SDK finds it with
    /// `vertexai=True`: the project in `GOOGLE_CLOUD_PROJECT` (else the one the credentials
    /// file names), the location in `GOOGLE_CLOUD_LOCATION` (else `global`), and requests
    /// authorized with the environment's Application Default Credentials
    /// ([`GoogleCredentials`]; [`GeminiModel::vertex_ai_express`] takes an API key instead).
    /// The endpoint is
    /// `https://{location}-aiplatform.googleapis.com/v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`
    /// (`aiplatform.googleapis.com` for `global`). Without a project, the first request
    /// fails with [`ModelError::Setup`] and nothing is sent.
    #[cfg(feature = "vertex")]
    pub fn vertex_ai(model: impl Into<String>) -> Self {
        let mut client = GeminiModel::new(model);
        client.api_key = None;
        client.vertex = Some(Vertex::new(
            // The credentials' project is GOOGLE_CLOUD_PROJECT's first.
            GoogleCredentials::from_env(),
            None,
            Some(env("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|| "global".to_owned())),
            "set GOOGLE_CLOUD_PROJECT, or call GeminiModel::with_vertex_project",
        ));
        client.aim_at_vertex();
        client
    }

    #[cfg(feature = "vertex")]
    crate::google::vertex::vertex_setters!();

    /// The endpoint's base URL, with its version path (`.../v1beta`). On Vertex AI, the
    /// endpoint's root (`https://host`), under which the version, project and location go.
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        match &mut self.vertex {
            Some(vertex) => {
                vertex.set_base(Some(base_url.to_owned()));
                self.aim_at_vertex();
            }
            None => {
                self.url = content_url(base_url, &self.model);
                self.stream_url = stream_url(base_url, &self.model);
            }
        }
        self
    }

    /// A client for `model` in Vertex AI's express mode: authorized by an API key, sent as
    /// `x-goog-api-key`, at
    /// `https://aiplatform.googleapis.com/v1beta1/publishers/google/models/{model}:generateContent`,
    /// without a project or location, as Google's Gen AI SDK sends it.
    #[cfg(feature = "vertex")]
    pub fn vertex_ai_express(model: impl Into<String>, key: ApiKey) -> Self {
        let mut client = GeminiModel::vertex_ai(model).with_api_key(key);
        if let Some(vertex) = &mut client.vertex {
            vertex.use_express();
        }
        client.aim_at_vertex();
        client
    }

    /// The URLs of the Vertex AI model, from its settings.
    fn aim_at_vertex(&mut self) {
        if let Some(vertex) = &self.vertex {
            let base = match vertex.is_express() {
                true => format!(
                    "{}/{VERTEX_API_VERSION}/publishers/google",
                    vertex
                        .given_base()
                        .map_or("https://aiplatform.googleapis.com", |r| {
                            r.trim_end_matches('/')
                        })
                ),
                false => format!(
                    "{}/publishers/google",
                    vertex.location_url(VERTEX_API_VERSION)
                ),
            };
            self.url = content_url(&base, &self.model);
            self.stream_url = stream_url(&base, &self.model);
        }
    }

    crate::http::client_setters!("the environment's");

    /// A field added to every request body (`safetySettings`, `cachedContent`...). A field the client writes itself
    /// (`contents`, `systemInstruction`, `tools`, `toolConfig`, `generationConfig`) is replaced by it: set those through the request instead.
    pub fn with_body_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }

    /// The request body for `request`.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let declarations = request.tools.declarations_or_declare(Format::Gemini);
        let aliases = &declarations.aliases;
        let mut body = Map::new();
        // Gemini 2 models refuse a JSON answer type beside function calling: with tools, the
        // schema is asked for in the instructions, and the answer checked as always.
        let format = request.response_format.as_ref();
        let schema_in_instructions = format.is_some() && request.offers_tools();
        let instructions = match format {
            Some(format) if schema_in_instructions => {
                Some(format.in_instructions(request.instructions.as_deref()))
            }
            _ => request.instructions.clone(),
        };
        if let Some(instructions) = instructions {
            body.insert(
                "systemInstruction".into(),
                json!({ "parts": [{ "text": instructions }] }),
            );
        }
        let replay = Replay {
            aliases,
            gemini_3: gemini_3_or_later(&self.model),
            source: &self.url,
        };
        let contents = contents(&request.messages, &replay);
        body.insert("contents".into(), contents);
        let mut generation = Map::new();
        if let Some(format) = format.filter(|_| !schema_in_instructions) {
            generation.extend(format.gemini().into_iter().map(|(k, v)| (k.to_owned(), v)));
        }
        if let Some(temperature) = request.temperature {
            generation.insert("temperature".into(), json!(temperature));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        if request.offers_tools() {
            body.insert("tools".into(), declarations.tools.clone());
            body.insert(
                "toolConfig".into(),
                json!({ "functionCallingConfig": calling_config(&request.tool_choice, aliases) }),
            );
        }
        for (name, value) in &self.extra {
            body.insert(name.clone(), value.clone());
        }
        Value::Object(body)
    }

    async fn post_to<'a>(&'a self, url: &'a str, body: Value) -> Result<JsonPost<'a>, ModelError> {
        let body = serde_json::to_vec(&body)
            .map_err(|e| ModelError::Setup(format!("the request is not JSON: {e}")))?;
        // On Vertex AI, the credentials authorize a request, and a key only in express mode.
        let authorizing = self.vertex.as_ref().filter(|vertex| !vertex.is_express());
        let key = match (authorizing, &self.api_key) {
            (Some(_), Some(_)) => {
                return Err(ModelError::Setup(
                    "GeminiModel::vertex_ai is authorized by Google credentials; an API key \
                     goes to GeminiModel::vertex_ai_express"
                        .to_owned(),
                ))
            }
            (Some(_), None) => None,
            (None, key) => key.as_ref(),
        };
        if authorizing.is_none() {
            crate::http::key_needed(
                key,
                &self.headers,
                "x-goog-api-key",
                url,
                "generativelanguage.googleapis.com",
                "GEMINI_API_KEY (or GOOGLE_API_KEY)",
            )?;
        }
        let mut headers = json_headers(key, HeaderName::from_static("x-goog-api-key"), false)?;
        if let Some(vertex) = authorizing {
            vertex.authorize(&mut headers).await?;
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

fn content_url(base_url: &str, model: &str) -> String {
    format!(
        "{}/models/{model}:generateContent",
        base_url.trim_end_matches('/')
    )
}

fn stream_url(base_url: &str, model: &str) -> String {
    format!(
        "{}/models/{model}:streamGenerateContent?alt=sse",
        base_url.trim_end_matches('/')
    )
}

/// Whether the model is Gemini 3 or later, which reads images in a function response (the
/// 1.x and 2.x models are sent the text alone) and refuses a call of the current turn sent
/// back without its thought signature.
fn gemini_3_or_later(model: &str) -> bool {
    let name = model.strip_prefix("models/").unwrap_or(model);
    !(name.starts_with("gemini-1") || name.starts_with("gemini-2"))
}

/// What Google documents to put in place of a thought signature the conversation does not
/// have (calls another model made, or this one under another endpoint, whose signatures
/// Gemini would refuse): Gemini 3 then takes the call as it is.
const NO_SIGNATURE: &str = "skip_thought_signature_validator";

/// How the conversation goes to this client.
struct Replay<'a> {
    /// The names the tools were declared under.
    aliases: &'a Aliases,
    /// Whether the model is Gemini 3 or later ([`gemini_3_or_later`]).
    gemini_3: bool,
    /// Whose thought signatures this client sends back ([`Reasoning::source`]).
    source: &'a str,
}

/// The neutral messages as Gemini contents: results of one answer's calls go together in one
/// user content of `functionResponse` parts, with their images where the model reads them.
/// An answer's first call goes with its thought signature, or for Gemini 3 [`NO_SIGNATURE`]
/// when it has none from this source.
fn contents(messages: &[Message], replay: &Replay<'_>) -> Value {
    let aliases = replay.aliases;
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |results: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({ "role": "user", "parts": std::mem::take(results) }));
        }
    };
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::Tool {
                call_id,
                name,
                text,
                is_error,
                images,
            } => {
                let mut response = Map::new();
                if let Some(id) = call_id {
                    response.insert("id".into(), json!(id));
                }
                response.insert("name".into(), json!(aliases.provider_name(name)));
                let body = if *is_error {
                    json!({ "error": text })
                } else {
                    json!({ "output": text })
                };
                response.insert("response".into(), body);
                if replay.gemini_3 && !images.is_empty() {
                    let parts = images
                        .iter()
                        .map(ToolImage::parts)
                        .map(|(data, mime_type)| gemini_inline_image(data, mime_type));
                    response.insert("parts".into(), parts.collect());
                }
                results.push(json!({ "functionResponse": response }));
            }
            Message::User { text } => {
                flush(&mut results, &mut out);
                out.push(json!({ "role": "user", "parts": [{ "text": text }] }));
            }
            // Sent with the answer after it.
            Message::Reasoning(_) => {}
            _ if message.is_empty_answer() => {}
            Message::Assistant { text, calls } => {
                flush(&mut results, &mut out);
                // Each part goes back with the thought signature it came with.
                let signatures = reasoning_before(messages, i, REASONING_API, Some(replay.source));
                let signed = |mut part: Value, index: Option<usize>| {
                    match signature_of(signatures, index) {
                        Some(signature) => part["thoughtSignature"] = signature.clone(),
                        None if index == Some(0) && replay.gemini_3 => {
                            part["thoughtSignature"] = json!(NO_SIGNATURE);
                        }
                        None => {}
                    }
                    part
                };
                let mut parts: Vec<Value> = Vec::new();
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    parts.push(signed(json!({ "text": text }), None));
                }
                for (n, call) in calls.iter().enumerate() {
                    let mut function = Map::new();
                    if let Some(id) = &call.id {
                        function.insert("id".into(), json!(id));
                    }
                    function.insert("name".into(), json!(aliases.provider_name(&call.name)));
                    let args = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    };
                    function.insert("args".into(), args);
                    parts.push(signed(json!({ "functionCall": function }), Some(n)));
                }
                out.push(json!({ "role": "model", "parts": parts }));
            }
        }
    }
    flush(&mut results, &mut out);
    Value::Array(out)
}

fn calling_config(choice: &ToolChoice, aliases: &Aliases) -> Value {
    match choice {
        ToolChoice::Auto => json!({ "mode": "AUTO" }),
        ToolChoice::Required => json!({ "mode": "ANY" }),
        ToolChoice::None => json!({ "mode": "NONE" }),
        ToolChoice::Tool(name) => json!({
            "mode": "ANY",
            "allowedFunctionNames": [aliases.provider_name(name)]
        }),
    }
}

/// The text, calls and usage of a `generateContent` answer.
fn response(answer: &Value, aliases: &Aliases, source: &str) -> Result<ModelResponse, ModelError> {
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
fn finish_reason(answer: &Value) -> Option<String> {
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
const REASONING_API: &str = "gemini";

/// The thought signatures of an answer's parts, each with the part it was on: Gemini 3
/// refuses a conversation whose function calls come back without theirs.
#[derive(Debug, Default)]
struct Signatures {
    /// `{"thoughtSignature": .., "call": n}` or `{"thoughtSignature": .., "text": true}`.
    blocks: Vec<Value>,
    /// The function calls read so far.
    calls: usize,
}

impl Signatures {
    /// Reads one part of the answer, in order.
    fn read(&mut self, part: &Value) {
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

    fn reasoning(&mut self, source: &str) -> Option<Reasoning> {
        Reasoning::given_by(REASONING_API, source, std::mem::take(&mut self.blocks))
    }
}

/// The signature a block of `blocks` gives the answer's call `index`, or its text (`None`).
fn signature_of(blocks: &[Value], index: Option<usize>) -> Option<&Value> {
    blocks
        .iter()
        .find(|block| match index {
            Some(n) => block.get("call").and_then(Value::as_u64) == Some(n as u64),
            None => block.get("text").is_some(),
        })
        .and_then(|block| block.get("thoughtSignature"))
}

impl ChatModel for GeminiModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self
                .post_to(&self.url, self.body(request))
                .await?
                .send()
                .await?;
            let aliases = request.tools.aliases_for(Format::Gemini);
            response(&answer, &aliases, &self.url)
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let opening = Box::pin(async move {
            let body = self.body(request);
            self.post_to(&self.stream_url, body).await?.open().await
        });
        let aliases = request.tools.aliases_for(Format::Gemini).into_owned();
        let decoder = stream_decoder(aliases, self.url.clone());
        sse::events(opening, self.stream_url.clone(), decoder)
    }

    fn format(&self) -> Option<Format> {
        Some(Format::Gemini)
    }

    fn model_name(&self) -> &str {
        &self.model
    }
}

/// What reads a streamed answer's payloads, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases, source: String) -> Box<dyn Decoder> {
    Box::new(Streamed {
        answer: StreamedAnswer::new(aliases, ending),
        source,
        ..Streamed::default()
    })
}

/// What a streamed answer's chunks said so far: each chunk is a partial answer whose text
/// parts continue the text and whose function calls come whole; the last usage counts.
#[derive(Default)]
struct Streamed {
    answer: StreamedAnswer,
    count: u64,
    signatures: Signatures,
    /// Who gave it ([`Reasoning::source`]): the endpoint's URL, which names the model.
    source: String,
}

impl Decoder for Streamed {
    fn call_bytes(&self) -> usize {
        self.answer.calls.bytes()
    }

    fn data(&mut self, data: &str, deltas: &mut Vec<String>) -> Result<bool, ModelError> {
        let chunk: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            provider: PROVIDER,
            message: format!(
                "a streamed chunk is not JSON ({e}): {}",
                crate::http::body_start(data, 300)
            ),
        })?;
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(ModelError::Status {
                provider: PROVIDER,
                status: 200,
                message: message.to_owned(),
                attempts: 1,
            });
        }
        if chunk.get("usageMetadata").is_some() {
            self.answer.usage = usage(&chunk);
        }
        let candidate = chunk.pointer("/candidates/0");
        if let Some(reason) = finish_reason(&chunk) {
            self.answer.finish_reason = Some(reason);
        }
        let parts = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            self.signatures.read(part);
            if let Some(call) = part.get("functionCall") {
                self.count += 1;
                let arguments = call.get("args").map(Value::to_string);
                self.answer.calls.push(
                    Some(self.count),
                    call.get("id").and_then(Value::as_str),
                    call.get("name").and_then(Value::as_str),
                    arguments.as_deref(),
                );
            } else if part.get("thought").and_then(Value::as_bool) != Some(true) {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    self.answer.text.push_str(text);
                    deltas.push(text.to_owned());
                }
            }
        }
        Ok(false)
    }

    /// Gemini's last chunk carries the candidate's `finishReason` (or the prompt's
    /// `blockReason`); a stream that closed before it was cut.
    fn cut_short(&self) -> Option<ModelError> {
        self.answer
            .finish_reason
            .is_none()
            .then(|| ModelError::Malformed {
                provider: PROVIDER,
                message: "the stream ended before a chunk with its finishReason".into(),
            })
    }

    fn finish(&mut self) -> ModelResponse {
        self.answer.reasoning = self.signatures.reasoning(&self.source);
        self.answer.finish()
    }
}

/// The usage of an answer (or of a stream's chunk).
fn usage(answer: &Value) -> Usage {
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

impl std::fmt::Debug for GeminiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiModel")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field("vertex", &self.vertex)
            .field("headers", &self.headers)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::ToolCall;
    use tool_model::message::ToolImage;

    /// The endpoint these tests' signatures come from.
    const HERE: &str = "http://gemini.test/v1beta/models/gemini-3-pro:generateContent";

    /// `messages` as contents for a model at [`HERE`], of Gemini 3 or not.
    fn replayed(messages: &[Message], gemini_3: bool) -> Value {
        let aliases = Aliases::default();
        let replay = Replay {
            aliases: &aliases,
            gemini_3,
            source: HERE,
        };
        contents(messages, &replay)
    }

    #[test]
    fn a_call_goes_back_with_its_own_signature_or_one_gemini_3_skips() {
        let signed = |source: Option<&str>, signature: &str| {
            Message::Reasoning(Reasoning {
                api: REASONING_API.into(),
                source: source.map(str::to_owned),
                blocks: vec![json!({ "thoughtSignature": signature, "call": 0 })],
            })
        };
        let calling = |ids: &[&str]| Message::Assistant {
            text: None,
            calls: ids
                .iter()
                .map(|id| ToolCall::new(*id, "add", json!({})))
                .collect(),
        };
        let transcript = [
            Message::user("add"),
            signed(Some(HERE), "s1"),
            calling(&["c1", "c2"]),
            // Another API's model, or a stored transcript's own from before sources.
            calling(&["c3"]),
            signed(None, "s4"),
            calling(&["c4"]),
            // Gemini under another endpoint or model: its signature would be refused.
            signed(Some("http://elsewhere.test/models/gemini-3-flash"), "s5"),
            calling(&["c5"]),
        ];
        let signatures = |contents: &Value| -> Vec<Vec<Option<String>>> {
            let models = contents.as_array().unwrap().iter();
            models
                .filter(|c| c["role"] == "model")
                .map(|c| {
                    let parts = c["parts"].as_array().unwrap().iter();
                    parts
                        .map(|p| p["thoughtSignature"].as_str().map(str::to_owned))
                        .collect()
                })
                .collect()
        };
        let skip = Some(NO_SIGNATURE.to_owned());
        assert_eq!(
            signatures(&replayed(&transcript, true)),
            [
                vec![Some("s1".to_owned()), None],
                vec![skip.clone()],
                vec![Some("s4".to_owned())],
                vec![skip],
            ]
        );
        // Gemini 2 needs none, and is sent none it was not given.
        assert_eq!(
            signatures(&replayed(&transcript, false)),
            [
                vec![Some("s1".to_owned()), None],
                vec![None],
                vec![Some("s4".to_owned())],
                vec![None],
            ]
        );
    }

    #[test]
    fn a_stream_that_closed_before_its_finish_reason_was_cut() {
        let mut decoder = stream_decoder(Aliases::default(), HERE.to_owned());
        let partial = json!({ "candidates": [{ "content": { "role": "model", "parts": [
            { "functionCall": { "name": "add", "args": {} } }
        ]}}]});
        decoder.data(&partial.to_string(), &mut Vec::new()).unwrap();
        assert!(decoder.cut_short().is_some());
        let last =
            json!({ "candidates": [{ "finishReason": "STOP", "content": { "parts": [] } }] });
        decoder.data(&last.to_string(), &mut Vec::new()).unwrap();
        assert!(decoder.cut_short().is_none());
    }

    #[test]
    fn an_answers_signatures_are_kept_with_their_source() {
        let answer = json!({ "candidates": [{ "content": { "role": "model", "parts": [
            { "functionCall": { "name": "add", "args": {} }, "thoughtSignature": "s1" }
        ]}}]});
        let whole = response(&answer, &Aliases::default(), HERE).unwrap();
        let mut decoder = stream_decoder(Aliases::default(), HERE.to_owned());
        decoder.data(&answer.to_string(), &mut Vec::new()).unwrap();
        let streamed = decoder.finish();
        for reasoning in [whole.reasoning, streamed.reasoning] {
            let reasoning = reasoning.expect("the signature is kept");
            assert_eq!(reasoning.source.as_deref(), Some(HERE));
            assert_eq!(
                reasoning.blocks,
                [json!({ "thoughtSignature": "s1", "call": 0 })]
            );
        }
    }

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
    fn an_empty_answer_is_left_out() {
        let transcript = [
            Message::user("hi"),
            Message::Assistant {
                text: None,
                calls: Vec::new(),
            },
            Message::user("hello?"),
        ];
        assert_eq!(
            replayed(&transcript, false),
            json!([
                { "role": "user", "parts": [{ "text": "hi" }] },
                { "role": "user", "parts": [{ "text": "hello?" }] }
            ])
        );
    }

    #[test]
    fn a_results_images_go_as_parts_of_its_function_response() {
        let result = Message::Tool {
            call_id: Some("g1".into()),
            name: "radar".into(),
            text: "the radar".into(),
            is_error: false,
            images: vec![ToolImage {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
            }],
        };
        let contents = replayed(std::slice::from_ref(&result), true);
        assert_eq!(
            contents[0]["parts"][0]["functionResponse"]["parts"],
            json!([{ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } }])
        );
        // Gemini 2 and earlier read no images there: the text alone.
        let older = replayed(&[result], false);
        assert!(older[0]["parts"][0]["functionResponse"]
            .get("parts")
            .is_none());
        assert!(gemini_3_or_later("gemini-3-pro-preview"));
        assert!(gemini_3_or_later("models/gemini-3-flash"));
        assert!(!gemini_3_or_later("gemini-2.5-flash"));
        assert!(!gemini_3_or_later("models/gemini-1.5-pro"));
    }

    #[test]
    fn calls_and_results_become_function_call_and_response_parts() {
        let transcript = [
            Message::user("add"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("g1", "add", json!({ "a": 1 }))],
            },
            Message::Tool {
                call_id: Some("g1".into()),
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                images: Vec::new(),
            },
        ];
        assert_eq!(
            replayed(&transcript, false),
            json!([
                { "role": "user", "parts": [{ "text": "add" }] },
                { "role": "model", "parts": [{ "functionCall": { "id": "g1", "name": "add", "args": { "a": 1 } } }] },
                { "role": "user", "parts": [{ "functionResponse": { "id": "g1", "name": "add", "response": { "output": "1" } } }] }
            ])
        );
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

    #[test]
    fn the_key_goes_in_a_header_and_never_in_the_url_or_debug() {
        let model = GeminiModel::new("m")
            .with_base_url("http://127.0.0.1:1/v1beta/")
            .with_api_key(ApiKey::new("AIza-secret"));
        assert_eq!(
            model.url(),
            "http://127.0.0.1:1/v1beta/models/m:generateContent"
        );
        assert!(!format!("{model:?}").contains("AIza-secret"));
    }
}
