//! What every client shares: [`HttpModel`], a model reached over HTTP that speaks one API,
//! with one set of settings (base URL, key, headers, retries, timeouts, body fields, how the
//! answer is generated) written once for all of them.

use std::time::Duration;

use serde_json::{Map, Value};
use tool_model::Generation;

use crate::http::{ApiKey, ExtraHeaders, HttpClient, RetryPolicy};

/// A model reached over HTTP, speaking API `A`: [`OpenAiChatModel`](crate::OpenAiChatModel) is
/// `HttpModel<OpenAiChat>`, [`AnthropicModel`](crate::AnthropicModel) `HttpModel<Anthropic>`,
/// and so on. The settings below are every client's; each API adds its own (its constructors,
/// Vertex AI, prompt caching, AWS credentials).
///
/// - The API key comes from the API's environment variable unless given with
///   [`with_api_key`](HttpModel::with_api_key) (or dropped with
///   [`without_api_key`](HttpModel::without_api_key)). It is never logged, and `Debug` shows
///   only whether there is one. A request to the API's own host without a key fails before it
///   is sent, naming the variable.
/// - Requests are retried on 429 and 5xx as [`RetryPolicy`] says, and time out as
///   [`with_timeouts`](HttpModel::with_timeouts) says (by default
///   [`DEFAULT_CONNECT_TIMEOUT`](crate::DEFAULT_CONNECT_TIMEOUT) and
///   [`DEFAULT_READ_TIMEOUT`](crate::DEFAULT_READ_TIMEOUT)).
/// - No redirect is followed: a key sent in `x-api-key`, `x-goog-api-key`, a signed header or
///   a [`with_header`](HttpModel::with_header) value would go wherever a redirect points. A
///   3xx answer is an error naming its `Location`. A client given with
///   [`with_client`](HttpModel::with_client) follows its own policy.
/// - [`with_generation`](HttpModel::with_generation) sets how answers are generated
///   ([`Generation`]: length, temperature, `top_p`, stop sequences, seed); a request's own
///   settings win over these, one by one.
pub struct HttpModel<A> {
    /// What the API itself needs: its URLs, and its own settings.
    pub(crate) api: A,
    pub(crate) model: String,
    pub(crate) client: HttpClient,
    pub(crate) api_key: Option<ApiKey>,
    pub(crate) headers: ExtraHeaders,
    pub(crate) retry: RetryPolicy,
    pub(crate) generation: Generation,
    /// Fields added to every request body.
    pub(crate) extra: Map<String, Value>,
}

impl<A: Clone> Clone for HttpModel<A> {
    fn clone(&self) -> Self {
        HttpModel {
            api: self.api.clone(),
            model: self.model.clone(),
            client: self.client.clone(),
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
            retry: self.retry,
            generation: self.generation.clone(),
            extra: self.extra.clone(),
        }
    }
}

/// An API a [`HttpModel`] speaks: [`OpenAiChat`](crate::OpenAiChat),
/// [`OpenAiResponses`](crate::OpenAiResponses), [`Anthropic`](crate::Anthropic),
/// [`Gemini`](crate::Gemini), [`Bedrock`](crate::Bedrock). Implemented by this crate alone; a
/// client of another API implements [`ChatModel`](tool_model::ChatModel) itself.
pub trait Api: sealed::Api {}

impl<A: sealed::Api> Api for A {}

pub(crate) mod sealed {
    /// What [`HttpModel`](super::HttpModel)'s shared settings need of an API.
    pub trait Api: Clone + std::fmt::Debug + Send + Sync + 'static {
        /// The client's name, in `Debug`.
        const NAME: &'static str;

        /// Points the client at the endpoint under `base_url`.
        fn set_base_url(model: &mut super::HttpModel<Self>, base_url: &str);

        /// The URL a request goes to.
        fn url(model: &super::HttpModel<Self>) -> &str;
    }
}

impl<A: sealed::Api> HttpModel<A> {
    /// A client of `model`, speaking `api`, with the key found (if any) and every other
    /// setting at its default.
    pub(crate) fn with_api(api: A, model: String, api_key: Option<ApiKey>) -> Self {
        HttpModel {
            api,
            model,
            client: crate::http::default_client(),
            api_key,
            headers: ExtraHeaders::default(),
            retry: RetryPolicy::default(),
            generation: Generation::default(),
            extra: Map::new(),
        }
    }

    /// The endpoint's base URL: with its version path for OpenAI (`https://api.openai.com/v1`,
    /// `http://127.0.0.1:8080/v1`), Anthropic (`https://api.anthropic.com/v1`) and Gemini
    /// (`https://generativelanguage.googleapis.com/v1beta`); the endpoint itself for Bedrock
    /// (`https://bedrock-runtime.us-east-1.amazonaws.com`, a VPC endpoint, a proxy: requests
    /// are still signed for the region). On Vertex AI, the root under which the project and
    /// location go. A trailing `/` is ignored.
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        A::set_base_url(&mut self, base_url);
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        A::url(self)
    }

    /// The model asked, as the API names it.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The API key, instead of the one found in the API's environment variable.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// No API key, even if the API's variable is set: for a local server, or a gateway that
    /// takes its own header ([`with_header`](HttpModel::with_header)).
    pub fn without_api_key(mut self) -> Self {
        self.api_key = None;
        self
    }

    /// A header sent with every request, replacing the client's own of the same name: an AI
    /// gateway's key, `OpenAI-Organization`, `anthropic-beta`. Its value is never logged, and
    /// `Debug` shows only its name. A name or value a header cannot carry fails the first
    /// request with [`ModelError::Setup`](tool_model::ModelError::Setup), naming it.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// How failed requests are retried (default [`RetryPolicy::default`]).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// How long a connection may take to open, and an answer (or a stream) may send nothing,
    /// before the request fails: the default client's
    /// [`DEFAULT_CONNECT_TIMEOUT`](crate::DEFAULT_CONNECT_TIMEOUT) and
    /// [`DEFAULT_READ_TIMEOUT`](crate::DEFAULT_READ_TIMEOUT), changed. It replaces a client
    /// given with [`with_client`](HttpModel::with_client) with the default one.
    pub fn with_timeouts(mut self, connect: Duration, read: Duration) -> Self {
        self.client = crate::http::client_with_timeouts(connect, read);
        self
    }

    /// The `reqwest` client to send with, for its proxy or TLS settings. It is used as it is:
    /// its own timeouts and redirect policy, not this crate's.
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = HttpClient::given(client);
        self
    }

    /// How answers are generated: their length, temperature, `top_p`, stop sequences and
    /// seed, each written in the API's own field ([`Generation`] says which). A request's own
    /// settings ([`ModelRequest::generation`](tool_model::ModelRequest::generation)) win over
    /// these, one by one.
    pub fn with_generation(mut self, generation: Generation) -> Self {
        self.generation = generation;
        self
    }

    /// The most tokens an answer may have (see [`HttpModel::with_generation`]).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.generation.max_tokens = Some(max_tokens);
        self
    }

    /// The sampling temperature (see [`HttpModel::with_generation`]).
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.generation.temperature = Some(temperature);
        self
    }

    /// A field added to every request body, replacing one of the same name the client writes:
    /// an API's setting this crate does not model (OpenAI's `reasoning_effort` or
    /// `service_tier`, Anthropic's `thinking` or `metadata`, Gemini's `safetySettings`,
    /// Bedrock's `guardrailConfig` or `additionalModelRequestFields`). What the request says
    /// (messages, tools, tool choice, response format) and what [`Generation`] covers are best
    /// set there.
    pub fn with_body_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }

    /// The generation settings of `request`, over the client's.
    pub(crate) fn generation_for(&self, request: &tool_model::ModelRequest) -> Generation {
        request.generation.over(&self.generation)
    }
}

impl<A: sealed::Api> std::fmt::Debug for HttpModel<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(A::NAME)
            .field("url", &A::url(self))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<hidden>"))
            .field("headers", &self.headers)
            .field("retry", &self.retry)
            .field("generation", &self.generation)
            .field("body_fields", &self.extra.keys().collect::<Vec<_>>())
            .field("api", &self.api)
            .finish()
    }
}

/// Warns that `api` has no field for `setting`, which is not sent.
pub(crate) fn not_taken(api: &'static str, setting: &'static str) {
    tracing::warn!(
        api,
        setting,
        "the API takes no such setting: it is not sent"
    );
}
