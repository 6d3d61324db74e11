//! Anthropic Messages over HTTP. Tools are declared and calls parsed by `tool-core`'s provider
//! module; this module writes the messages (a call's results go back as one user message of
//! `tool_result` blocks) and reads the text and usage, whole or streamed.

mod messages;
mod response;
mod stream;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{json, Map, Value};
use tool_core::provider::Format;

use messages::{last_container, messages, tool_choice};
use response::response;
pub(crate) use stream::stream_decoder;

#[cfg(feature = "vertex")]
use crate::google::vertex::env;
use crate::google::vertex::Vertex;
use crate::http::{json_headers, ApiKey, JsonPost};
use crate::model::{not_taken, HttpModel};
use crate::sse;
#[cfg(feature = "vertex")]
use crate::GoogleCredentials;
use tool_model::message::has_tool_turns;
use tool_model::ModelEventStream;
use tool_model::{ChatModel, ModelError, ModelFuture, ModelRequest, PromptCache, ToolChoice};

const PROVIDER: &str = "Anthropic";

/// A [`ChatModel`] speaking Anthropic Messages (`POST {base_url}/messages`).
///
/// The API key comes from `ANTHROPIC_API_KEY` unless set with
/// [`AnthropicModel::with_api_key`](HttpModel::with_api_key); it is sent as `x-api-key`, never logged, and `Debug`
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
pub type AnthropicModel = HttpModel<Anthropic>;

/// Anthropic Messages, the API of [`AnthropicModel`].
#[derive(Clone, Debug)]
pub struct Anthropic {
    url: String,
    /// Where a streamed answer is asked for: `url`, but on Vertex AI.
    stream_url: String,
    cache: Option<PromptCache>,
    /// Vertex AI's project, location and credentials, for Claude there.
    vertex: Option<Vertex>,
}

impl crate::model::sealed::Api for Anthropic {
    const NAME: &'static str = "AnthropicModel";

    /// With its version path (`https://api.anthropic.com/v1`); on Vertex AI too
    /// (`https://host/v1`, as `AnthropicVertex` takes it), under which the project and
    /// location go.
    fn set_base_url(model: &mut HttpModel<Self>, base_url: &str) {
        match &mut model.api.vertex {
            Some(vertex) => {
                vertex.set_base(Some(base_url.to_owned()));
                Anthropic::point_at_vertex(model);
            }
            None => {
                model.api.url = messages_url(base_url);
                model.api.stream_url = model.api.url.clone();
            }
        }
    }

    fn url(model: &HttpModel<Self>) -> &str {
        &model.api.url
    }
}

#[cfg(feature = "vertex")]
impl crate::google::vertex::sealed::OnVertex for Anthropic {
    fn vertex(model: &mut HttpModel<Self>) -> Option<&mut Vertex> {
        model.api.vertex.as_mut()
    }

    fn aim_at_vertex(model: &mut HttpModel<Self>) {
        Anthropic::point_at_vertex(model);
    }
}

impl Anthropic {
    /// The URLs of the Vertex AI model, from its settings.
    fn point_at_vertex(model: &mut HttpModel<Self>) {
        if let Some(vertex) = &model.api.vertex {
            // A base URL given holds its version, as the SDK's does.
            let base = match vertex.given_base() {
                Some(base) => base.trim_end_matches('/').to_owned(),
                None => format!("{}/v1", vertex.root()),
            };
            let at = format!(
                "{base}/{}/publishers/anthropic/models/{}",
                vertex.project_location(),
                model.model
            );
            model.api.url = format!("{at}:rawPredict");
            model.api.stream_url = format!("{at}:streamRawPredict");
        }
    }
}

impl AnthropicModel {
    /// Anthropic's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com/v1";
    /// The API version sent in `anthropic-version`.
    pub const API_VERSION: &'static str = "2023-06-01";
    /// The API version Vertex AI is sent, in the body's `anthropic_version`.
    pub const VERTEX_API_VERSION: &'static str = "vertex-2023-10-16";
    /// The `max_tokens` sent when none is set: the API requires one.
    pub const DEFAULT_MAX_TOKENS: u32 = 4096;

    /// A client for `model` at [`AnthropicModel::DEFAULT_BASE_URL`], with the key in
    /// `ANTHROPIC_API_KEY` if it is set.
    pub fn new(model: impl Into<String>) -> Self {
        let api = Anthropic {
            url: messages_url(Self::DEFAULT_BASE_URL),
            stream_url: messages_url(Self::DEFAULT_BASE_URL),
            cache: None,
            vertex: None,
        };
        HttpModel::with_api(api, model.into(), ApiKey::from_env("ANTHROPIC_API_KEY"))
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
        client.api.vertex = Some(vertex);
        Anthropic::point_at_vertex(&mut client);
        client
    }

    /// Caches each request's prefix (tools, system prompt, messages so far): the request's
    /// top-level `cache_control`, which marks its last cacheable block. A run's later steps
    /// then read the earlier ones from the cache, billed as cached input
    /// ([`Usage::cached_input_tokens`](tool_model::Usage::cached_input_tokens)).
    pub fn with_prompt_cache(mut self, cache: PromptCache) -> Self {
        self.api.cache = Some(cache);
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
            ToolChoice::Required | ToolChoice::Tool(_) | ToolChoice::Allowed(_, _) if thinking => {
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
        match self.api.vertex {
            // Vertex AI takes the model in the URL, and the version in the body.
            Some(_) => body.insert("anthropic_version".into(), json!(Self::VERTEX_API_VERSION)),
            None => body.insert("model".into(), json!(self.model)),
        };
        let generation = self.generation_for(request);
        // The API requires it.
        let max_tokens = generation.max_tokens.unwrap_or(Self::DEFAULT_MAX_TOKENS);
        body.insert("max_tokens".into(), json!(max_tokens));
        if !generation.stop.is_empty() {
            body.insert("stop_sequences".into(), json!(generation.stop));
        }
        // The Messages API has no sampling parameters, nor a seed.
        for (setting, set) in [
            ("temperature", generation.temperature.is_some()),
            ("top_p", generation.top_p.is_some()),
            ("seed", generation.seed.is_some()),
        ] {
            if set {
                not_taken(PROVIDER, setting);
            }
        }
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
        match self.api.cache {
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
        // Code that called tools goes on in its container.
        if let Some(container) = last_container(&request.messages) {
            body.insert("container".into(), json!(container));
        }
        if request.offers_tools() {
            let tools = crate::allowed::only_named(
                &declarations.tools,
                &request.tool_choice,
                aliases,
                "/name",
            );
            body.insert("tools".into(), tools);
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
        let key = match (&self.api.vertex, &self.api_key) {
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
        if self.api.vertex.is_none() {
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
        match &self.api.vertex {
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

impl ChatModel for AnthropicModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self
                .post(&self.api.url, self.body(request))
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
            self.post(&self.api.stream_url, body).await?.open().await
        });
        let aliases = request.tools.aliases_for(Format::Anthropic).into_owned();
        sse::events(
            opening,
            self.api.stream_url.clone(),
            stream_decoder(aliases),
        )
    }

    fn format(&self) -> Option<Format> {
        Some(Format::Anthropic)
    }

    fn model_name(&self) -> &str {
        &self.model
    }
}

#[cfg(test)]
mod tests {
    use super::response::REASONING_API;
    use super::*;
    use tool_core::provider::Aliases;
    use tool_core::ToolCall;
    use tool_model::message::Message;
    use tool_model::ModelResponse;

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
                attachments: Vec::new(),
                found_tools: Vec::new(),
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

    /// A turn Anthropic paused in a search: text, the search, its results.
    pub(super) fn paused_content() -> Value {
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

    pub(super) fn kept_whole(response: &ModelResponse) -> Value {
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
        // The server tool's input streams as no call.
        let text = |t: &str| tool_model::ModelEvent::TextDelta(t.into());
        assert_eq!(deltas, [text("Search"), text("ing.")]);
        assert!(streamed.calls.is_empty(), "a server tool's use is no call");
        assert_eq!(kept_whole(&streamed), paused_content());
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
    #[cfg(feature = "vertex")]
    fn on_vertex_ai_the_model_is_in_the_url_and_the_version_in_the_body() {
        let model = AnthropicModel::vertex_ai("claude-haiku-4-5@20251001")
            .with_vertex_project("p")
            .with_vertex_location("global")
            .with_body_field("metadata", json!({ "user_id": "u" }));
        let root = "https://aiplatform.googleapis.com/v1/projects/p/locations/global";
        let models = format!("{root}/publishers/anthropic/models/claude-haiku-4-5@20251001");
        assert_eq!(model.api.url, format!("{models}:rawPredict"));
        assert_eq!(model.api.stream_url, format!("{models}:streamRawPredict"));
        let body = model.body(&ModelRequest::new(vec![Message::user("hi")]));
        assert_eq!(body.get("model"), None);
        assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
        assert_eq!(body["metadata"]["user_id"], "u");
        let moved = model.with_base_url("http://127.0.0.1:9/v1/");
        assert_eq!(
            moved.api.url,
            "http://127.0.0.1:9/v1/projects/p/locations/global/publishers/anthropic/models/\
             claude-haiku-4-5@20251001:rawPredict"
        );
    }
}
