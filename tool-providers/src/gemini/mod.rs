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
use crate::http::{json_headers, ApiKey, JsonPost};
use crate::model::HttpModel;
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
/// [`GeminiModel::with_api_key`](HttpModel::with_api_key); it is sent as `x-goog-api-key`, never in the URL, never
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
pub type GeminiModel = HttpModel<Gemini>;

/// Gemini `generateContent`, the API of [`GeminiModel`].
#[derive(Clone, Debug)]
pub struct Gemini {
    url: String,
    stream_url: String,
    /// Vertex AI's project, location and credentials, for a model there.
    vertex: Option<Vertex>,
    /// Whether `ToolChoice::Auto` asks for the `VALIDATED` mode.
    validated: bool,
}

impl crate::model::sealed::Api for Gemini {
    const NAME: &'static str = "GeminiModel";

    /// With its version path (`.../v1beta`). On Vertex AI, the endpoint's root
    /// (`https://host`), under which the version, project and location go.
    fn set_base_url(model: &mut HttpModel<Self>, base_url: &str) {
        match &mut model.api.vertex {
            Some(vertex) => {
                vertex.set_base(Some(base_url.to_owned()));
                Gemini::point_at_vertex(model);
            }
            None => {
                model.api.url = content_url(base_url, &model.model);
                model.api.stream_url = stream_url(base_url, &model.model);
            }
        }
    }

    fn url(model: &HttpModel<Self>) -> &str {
        &model.api.url
    }
}

#[cfg(feature = "vertex")]
impl crate::google::vertex::sealed::OnVertex for Gemini {
    fn vertex(model: &mut HttpModel<Self>) -> Option<&mut Vertex> {
        model.api.vertex.as_mut()
    }

    fn aim_at_vertex(model: &mut HttpModel<Self>) {
        Gemini::point_at_vertex(model);
    }
}

impl Gemini {
    /// The URLs of the Vertex AI model, from its settings.
    fn point_at_vertex(model: &mut HttpModel<Self>) {
        if let Some(vertex) = &model.api.vertex {
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
            model.api.url = content_url(&base, &model.model);
            model.api.stream_url = stream_url(&base, &model.model);
        }
    }
}

impl GeminiModel {
    /// Google's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com/v1beta";

    /// A client for `model` at [`GeminiModel::DEFAULT_BASE_URL`], with the key in
    /// `GEMINI_API_KEY` or `GOOGLE_API_KEY` if one is set.
    pub fn new(model: impl Into<String>) -> Self {
        let model = model.into();
        let api = Gemini {
            url: content_url(Self::DEFAULT_BASE_URL, &model),
            stream_url: stream_url(Self::DEFAULT_BASE_URL, &model),
            vertex: None,
            validated: false,
        };
        let key = ApiKey::from_env("GEMINI_API_KEY").or_else(|| ApiKey::from_env("GOOGLE_API_KEY"));
        HttpModel::with_api(api, model, key)
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
        client.api.vertex = Some(Vertex::new(
            // The credentials' project is GOOGLE_CLOUD_PROJECT's first.
            GoogleCredentials::from_env(),
            None,
            Some(env("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|| "global".to_owned())),
            "set GOOGLE_CLOUD_PROJECT, or call GeminiModel::with_vertex_project",
        ));
        Gemini::point_at_vertex(&mut client);
        client
    }

    /// A client for `model` in Vertex AI's express mode: authorized by an API key, sent as
    /// `x-goog-api-key`, at
    /// `https://aiplatform.googleapis.com/v1beta1/publishers/google/models/{model}:generateContent`,
    /// without a project or location, as Google's Gen AI SDK sends it.
    #[cfg(feature = "vertex")]
    pub fn vertex_ai_express(model: impl Into<String>, key: ApiKey) -> Self {
        let mut client = GeminiModel::vertex_ai(model).with_api_key(key);
        if let Some(vertex) = &mut client.api.vertex {
            vertex.use_express();
        }
        Gemini::point_at_vertex(&mut client);
        client
    }

    /// Asks for Gemini's `VALIDATED` function calling mode wherever the tool choice is
    /// [`ToolChoice::Auto`](tool_model::ToolChoice::Auto): the model answers in text or with
    /// calls that Gemini holds to their declared schemas, instead of `AUTO`'s unchecked calls.
    /// The other choices are sent as always (`ToolChoice::Allowed` with `AllowedMode::Auto` is
    /// `VALIDATED` already).
    pub fn with_validated_calls(mut self) -> Self {
        self.api.validated = true;
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
            source: &self.api.url,
        };
        let contents = contents(&request.messages, &replay);
        body.insert("contents".into(), contents);
        let mut generation = Map::new();
        if let Some(format) = format.filter(|_| !schema_in_instructions) {
            generation.extend(format.gemini().into_iter().map(|(k, v)| (k.to_owned(), v)));
        }
        let settings = self.generation_for(request);
        let written = [
            ("maxOutputTokens", settings.max_tokens.map(Value::from)),
            (
                "temperature",
                settings.finite_temperature().map(Value::from),
            ),
            ("topP", settings.finite_top_p().map(Value::from)),
            ("seed", settings.seed.map(Value::from)),
            (
                "stopSequences",
                (!settings.stop.is_empty()).then(|| json!(settings.stop)),
            ),
        ];
        for (name, value) in written {
            if let Some(value) = value {
                generation.insert(name.into(), value);
            }
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        if request.offers_tools() {
            body.insert("tools".into(), declarations.tools.clone());
            body.insert(
                "toolConfig".into(),
                json!({ "functionCallingConfig": calling_config(&request.tool_choice, aliases, self.api.validated) }),
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
        let authorizing = self
            .api
            .vertex
            .as_ref()
            .filter(|vertex| !vertex.is_express());
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
                .post_to(&self.api.url, self.body(request))
                .await?
                .send()
                .await?;
            let aliases = request.tools.aliases_for(Format::Gemini);
            response(&answer, &aliases, &self.api.url)
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let opening = Box::pin(async move {
            let body = self.body(request);
            self.post_to(&self.api.stream_url, body).await?.open().await
        });
        let aliases = request.tools.aliases_for(Format::Gemini).into_owned();
        let decoder = stream_decoder(aliases, self.api.url.clone());
        sse::events(opening, self.api.stream_url.clone(), decoder)
    }

    fn format(&self) -> Option<Format> {
        Some(Format::Gemini)
    }

    fn model_name(&self) -> &str {
        &self.model
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
