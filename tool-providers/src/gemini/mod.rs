//! Gemini `generateContent` over HTTP. Tools are declared and calls parsed by `tool-core`'s
//! provider module; this module writes the contents (a call's results go back as one user
//! content of `functionResponse` parts) and reads the text and usage, whole or streamed
//! (`streamGenerateContent` with `alt=sse`).

mod messages;
mod response;
mod stream;

use reqwest::header::HeaderName;
use serde_json::{json, Map, Value};
use tool_core::provider::Format;

use messages::{calling_config, contents, gemini_3_or_later, Replay};
use response::response;
pub(crate) use stream::stream_decoder;

#[cfg(feature = "vertex")]
use crate::google::vertex::env;
use crate::google::vertex::Vertex;
use crate::http::{json_headers, ApiKey, ExtraHeaders, JsonPost, RetryPolicy};
use crate::sse;
#[cfg(feature = "vertex")]
use crate::GoogleCredentials;
use tool_model::ModelEventStream;
use tool_model::{ChatModel, ModelError, ModelFuture, ModelRequest};

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
    use tool_core::provider::Aliases;

    /// The endpoint these tests' signatures come from.
    pub(super) const HERE: &str = "http://gemini.test/v1beta/models/gemini-3-pro:generateContent";

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
