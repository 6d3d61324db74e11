//! Amazon Bedrock Converse over HTTP. Tools are declared and calls parsed by `tool-core`'s
//! provider module; this module writes the messages (a call's results go back as one user
//! message of `toolResult` blocks), signs the request (SigV4, or a Bedrock API key) and reads
//! the text and usage, whole or streamed (`ConverseStream`, an AWS event stream).

mod messages;
mod stream;

use std::sync::Arc;
use std::time::SystemTime;

use reqwest::header::AUTHORIZATION;
use serde_json::{json, Map, Value};
use tool_core::provider::{Aliases, Format};

use messages::{messages, takes_result_status};
#[cfg(feature = "fuzzing")]
pub(crate) use stream::{event_reader, stream_decoder};

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};

use crate::aws::{dns_suffix, environment_region, signing, AwsCredentialChain, AwsCredentials};
use crate::aws_frames::FrameReader;
use crate::http::{json_headers, ApiKey, JsonPost, Signer};
use crate::model::{not_taken, HttpModel};
use crate::sse;
use tool_model::message::{has_tool_turns, Reasoning, Usage};
use tool_model::{
    AllowedMode, ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, PromptCache,
    ToolChoice,
};
use tool_model::{Ending, ModelEventStream};

pub(crate) const PROVIDER: &str = "Bedrock";

/// A [`ChatModel`] speaking Amazon Bedrock Converse
/// (`POST https://bedrock-runtime.{region}.amazonaws.com/model/{model}/converse`).
///
/// Requests are authorised with a Bedrock API key when there is one (`AWS_BEARER_TOKEN_BEDROCK`,
/// or [`BedrockModel::with_api_key`](HttpModel::with_api_key)), sent as a bearer token; otherwise they are signed with
/// AWS Signature Version 4 from credentials found as the AWS CLI finds them
/// ([`AwsCredentialChain`]: the environment's keys; the profile's role, web identity, SSO
/// role, keys or `credential_process`; a container's or an EC2 instance's role), or given with
/// [`BedrockModel::with_credentials`], [`BedrockModel::with_profile`] or, for credentials of
/// your own that are renewed, [`BedrockModel::with_credentials_provider`]. The region comes
/// from `AWS_REGION` or `AWS_DEFAULT_REGION`, else the profile's, else `us-east-1`. No secret
/// is ever logged, and `Debug` shows none.
///
/// The model is a model id, an inference profile id or an ARN; it is percent-encoded into the
/// path. `maxTokens` is sent only when set with [`BedrockModel::with_max_tokens`](HttpModel::with_max_tokens) (or `with_generation`).
///
/// ```
/// use tool_providers::BedrockModel;
///
/// let model = BedrockModel::new("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
///     .with_region("us-west-2");
/// assert_eq!(
///     model.url(),
///     "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
/// );
/// ```
pub type BedrockModel = HttpModel<Bedrock>;

/// Amazon Bedrock Converse, the API of [`BedrockModel`].
#[derive(Clone)]
pub struct Bedrock {
    url: String,
    stream_url: String,
    /// The endpoint set with `with_base_url`, kept when the region changes.
    base_url: Option<String>,
    region: String,
    /// Whether the region was set with `with_region`, rather than found.
    region_chosen: bool,
    /// Whether the region is to be read from the profile at the first request: none was
    /// given in code or in the environment, and no base URL.
    region_pending: bool,
    /// The profile's region and its URLs, once read.
    found: Arc<tokio::sync::OnceCell<Target>>,
    credentials: Credentials,
    cache: Option<PromptCache>,
}

impl std::fmt::Debug for Bedrock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bedrock")
            .field("region", &self.region)
            .field("credentials", &self.credentials)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl crate::model::sealed::Api for Bedrock {
    const NAME: &'static str = "BedrockModel";

    /// Another endpoint (a VPC endpoint, a proxy), such as
    /// `https://bedrock-runtime.us-east-1.amazonaws.com`; requests are still signed for the
    /// region.
    fn set_base_url(model: &mut HttpModel<Self>, base_url: &str) {
        model.point_at(base_url);
        model.api.base_url = Some(base_url.to_owned());
        model.api.region_pending = false;
    }

    fn url(model: &HttpModel<Self>) -> &str {
        &model.api.url
    }
}

impl BedrockModel {
    /// A client for `model` in the environment's region, with the environment's API key or
    /// credentials.
    pub fn new(model: impl Into<String>) -> Self {
        let chain = AwsCredentialChain::from_env();
        let from_env = environment_region();
        let region_pending = from_env.is_none();
        let region = from_env.unwrap_or_else(|| DEFAULT_REGION.to_owned());
        let model = model.into();
        let endpoint = regional_endpoint(&region);
        let api = Bedrock {
            url: converse_url(&endpoint, &model, "converse"),
            stream_url: converse_url(&endpoint, &model, "converse-stream"),
            base_url: None,
            region,
            region_chosen: false,
            region_pending,
            found: Arc::default(),
            credentials: Credentials::Chain(Arc::new(chain)),
            cache: None,
        };
        HttpModel::with_api(api, model, ApiKey::from_env("AWS_BEARER_TOKEN_BEDROCK"))
    }

    /// The region, such as `eu-west-1`: requests are signed for it, and go to its endpoint
    /// unless one was set with [`BedrockModel::with_base_url`](HttpModel::with_base_url).
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.set_region(region.into());
        self.api.region_chosen = true;
        self.api.region_pending = false;
        self
    }

    fn set_region(&mut self, region: String) {
        self.api.region = region;
        if self.api.base_url.is_none() {
            self.point_at(&regional_endpoint(&self.api.region));
        }
    }

    fn point_at(&mut self, endpoint: &str) {
        self.api.url = converse_url(endpoint, &self.model, "converse");
        self.api.stream_url = converse_url(endpoint, &self.model, "converse-stream");
    }

    /// AWS credentials to sign requests with, instead of the environment's. An API key, if
    /// there is one, is used instead of them.
    pub fn with_credentials(mut self, credentials: AwsCredentials) -> Self {
        self.api.credentials = Credentials::Fixed(credentials);
        self
    }

    /// Credentials from this chain (the default is [`AwsCredentialChain::from_env`]): say one
    /// over variables of your own, with [`AwsCredentialChain::from_vars`]. The region is not
    /// changed: set it with [`BedrockModel::with_region`] (from
    /// [`AwsCredentialChain::region`], say).
    pub fn with_credential_chain(mut self, chain: AwsCredentialChain) -> Self {
        self.api.credentials = Credentials::Chain(Arc::new(chain));
        self
    }

    /// The credentials and region of this profile of `~/.aws/config` and
    /// `~/.aws/credentials`, as with the AWS CLI's `--profile`: what the profile gives (see
    /// [`AwsCredentialChain`]), not the environment's keys. The region stays one set with
    /// [`BedrockModel::with_region`], before or after; otherwise it is `AWS_REGION`'s or
    /// `AWS_DEFAULT_REGION`'s, else the profile's, else `us-east-1`.
    pub fn with_profile(mut self, profile: &str) -> Self {
        let chain = AwsCredentialChain::from_env().with_profile(profile);
        if !self.api.region_chosen {
            let from_env = environment_region();
            self.api.region_pending = from_env.is_none() && self.api.base_url.is_none();
            self.set_region(from_env.unwrap_or_else(|| DEFAULT_REGION.to_owned()));
        }
        self.with_credential_chain(chain)
    }

    /// Where the AWS credentials to sign with come from: any provider of the AWS SDK's
    /// (`aws_credential_types::provider::ProvideCredentials`), such as your own
    /// `aws_config::load_defaults(..).await.credentials_provider()`, or
    /// `aws_credential_types::credential_fn::provide_credentials_fn(|| async { .. })` for
    /// credentials your code renews. Credentials with an expiry are kept until ten minutes
    /// before it; those without are asked for at each request. A provider's error fails the
    /// request with [`ModelError::Setup`], naming it. An API key, if there is one, is used
    /// instead.
    pub fn with_credentials_provider(
        mut self,
        provider: impl ProvideCredentials + 'static,
    ) -> Self {
        self.api.credentials = Credentials::Provider(Arc::new(Provided {
            provider: SharedCredentialsProvider::new(provider),
            kept: std::sync::Mutex::new(None),
        }));
        self
    }

    /// Caches each request's prefix (tools, system prompt, messages so far): a `cachePoint`
    /// block at the end of the last message, so that a run's later steps read the earlier
    /// ones from the cache, billed as cached input
    /// ([`Usage::cached_input_tokens`](tool_model::Usage::cached_input_tokens)). For the models that
    /// cache (Anthropic Claude, Amazon Nova); a prefix shorter than the model's minimum is not
    /// cached.
    pub fn with_prompt_cache(mut self, cache: PromptCache) -> Self {
        self.api.cache = Some(cache);
        self
    }

    /// The request body for `request`.
    ///
    /// A structured answer's schema is asked for in the system prompt, and the answer checked
    /// as always: Converse's `outputConfig` is taken by some models only. Converse has no tool
    /// choice "none": then no tool choice is sent, and tools are declared only when the
    /// conversation already holds tool calls, which Converse requires (the request's tools, or
    /// when it has none the tools called, with an open schema); a call the model makes anyway
    /// is not run. A temperature is held to Converse's 0 to 1. The conversation is written as
    /// Converse takes it: turns that alternate and start with the user, none empty, no blank
    /// text, valid and unique tool use ids.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let history_has_tools = has_tool_turns(&request.messages);
        let declarations = request.declarations_for(Format::Bedrock);
        let aliases = &declarations.aliases;
        let mut body = Map::new();
        let with_status = takes_result_status(&self.model);
        let mut messages = messages(&request.messages, aliases, with_status);
        if let Some(cache) = self.api.cache {
            let point = match cache {
                PromptCache::FiveMinutes => json!({ "cachePoint": { "type": "default" } }),
                PromptCache::OneHour => json!({ "cachePoint": { "type": "default", "ttl": "1h" } }),
            };
            let last = messages.as_array_mut().and_then(|m| m.last_mut());
            if let Some(Value::Array(content)) = last.and_then(|m| m.get_mut("content")) {
                content.push(point);
            }
        }
        body.insert("messages".into(), messages);
        let instructions = match &request.response_format {
            Some(format) => Some(format.in_instructions(request.instructions.as_deref())),
            None => request.instructions.clone(),
        };
        if let Some(instructions) = instructions.filter(|i| !i.trim().is_empty()) {
            body.insert("system".into(), json!([{ "text": instructions }]));
        }
        let mut inference = Map::new();
        let generation = self.generation_for(request);
        if let Some(max_tokens) = generation.max_tokens {
            inference.insert("maxTokens".into(), json!(max_tokens));
        }
        if let Some(temperature) = generation.finite_temperature() {
            // Converse takes 0 to 1.
            inference.insert("temperature".into(), json!(temperature.clamp(0.0, 1.0)));
        }
        if let Some(top_p) = generation.finite_top_p() {
            inference.insert("topP".into(), json!(top_p));
        }
        if !generation.stop.is_empty() {
            inference.insert("stopSequences".into(), json!(generation.stop));
        }
        if generation.seed.is_some() {
            not_taken(PROVIDER, "seed");
        }
        if !inference.is_empty() {
            body.insert("inferenceConfig".into(), Value::Object(inference));
        }
        if request.offers_tools() {
            let mut config = Map::new();
            let tools = crate::allowed::only_named(
                &declarations.tools,
                &request.tool_choice,
                aliases,
                "/toolSpec/name",
            );
            config.insert("tools".into(), tools);
            config.insert(
                "toolChoice".into(),
                tool_choice(&request.tool_choice, aliases),
            );
            body.insert("toolConfig".into(), Value::Object(config));
        } else if history_has_tools {
            let tools = declarations.tools.clone();
            body.insert("toolConfig".into(), json!({ "tools": tools }));
        }
        for (name, value) in &self.extra {
            body.insert(name.clone(), value.clone());
        }
        Value::Object(body)
    }

    /// The region requests are signed for and the URLs they go to: those known when the client
    /// was made, or the profile's region's, read at the first request when neither code nor
    /// the environment named a region (else `us-east-1`).
    async fn target(&self) -> (&str, &str, &str) {
        if !self.api.region_pending {
            return (&self.api.region, &self.api.url, &self.api.stream_url);
        }
        let found = self
            .api
            .found
            .get_or_init(|| async {
                let region = match &self.api.credentials {
                    Credentials::Chain(chain) => chain.region().await,
                    _ => None,
                };
                let region = region.unwrap_or_else(|| self.api.region.clone());
                let endpoint = regional_endpoint(&region);
                Target {
                    url: converse_url(&endpoint, &self.model, "converse"),
                    stream_url: converse_url(&endpoint, &self.model, "converse-stream"),
                    region,
                }
            })
            .await;
        (&found.region, &found.url, &found.stream_url)
    }

    async fn post<'a>(&'a self, streamed: bool, body: Value) -> Result<JsonPost<'a>, ModelError> {
        let (region, url, stream_url) = self.target().await;
        let url = if streamed { stream_url } else { url };
        let body = serde_json::to_vec(&body)
            .map_err(|e| ModelError::Setup(format!("the request is not JSON: {e}")))?;
        // The region names the host the key or the signature goes to.
        if self.api.base_url.is_none() && !crate::aws::is_region(region) {
            return Err(ModelError::Setup(
                "the Bedrock region is not a region name (lower-case letters, digits and '-'): \
                 set one with with_region or AWS_REGION"
                    .into(),
            ));
        }
        let mut sign: Option<Signer<'a>> = None;
        let headers = match &self.api_key {
            Some(key) => self
                .headers
                .apply(json_headers(Some(key), AUTHORIZATION, true)?)?,
            None => {
                let credentials = self.api.credentials.current().await?;
                // Signed now for the first attempt, and again for each retry: a signature is good
                // for minutes only.
                let extra = self.headers.pairs()?;
                let signed = move |body: &[u8]| {
                    let now = SystemTime::now();
                    signing::signed_headers(url, region, &credentials, &extra, body, now)
                };
                let headers = signed(&body)?;
                sign = Some(Box::new(signed));
                headers
            }
        };
        Ok(JsonPost {
            client: &self.client,
            url,
            headers,
            body,
            retry: self.retry,
            provider: PROVIDER,
            sign,
        })
    }
}

/// The AWS credentials a client signs with: given once, found by the chain, or asked of a
/// provider.
#[derive(Clone)]
enum Credentials {
    Fixed(AwsCredentials),
    Chain(Arc<AwsCredentialChain>),
    Provider(Arc<Provided>),
}

/// A provider's credentials, and the last ones while they last.
struct Provided {
    provider: SharedCredentialsProvider,
    kept: std::sync::Mutex<Option<(AwsCredentials, SystemTime)>>,
}

/// A provider's credentials are asked for again once they expire within this.
const PROVIDED_REFRESH: std::time::Duration = std::time::Duration::from_secs(10 * 60);

impl Provided {
    async fn current(&self) -> Result<AwsCredentials, ModelError> {
        let lock = || {
            self.kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let fresh_until = SystemTime::now() + PROVIDED_REFRESH;
        if let Some((credentials, _)) = lock().as_ref().filter(|(_, ends)| *ends > fresh_until) {
            return Ok(credentials.clone());
        }
        let given = self.provider.provide_credentials().await.map_err(|e| {
            let why = crate::http::error_chain(&e);
            ModelError::Setup(format!("the AWS credentials provider failed: {why}"))
        })?;
        let credentials = AwsCredentials::from(&given);
        *lock() = given.expiry().map(|ends| (credentials.clone(), ends));
        Ok(credentials)
    }
}

impl Credentials {
    /// The credentials to sign the next request with.
    async fn current(&self) -> Result<AwsCredentials, ModelError> {
        match self {
            Credentials::Fixed(credentials) => Ok(credentials.clone()),
            Credentials::Chain(chain) => chain.credentials().await,
            Credentials::Provider(provided) => provided.current().await,
        }
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Fixed(credentials) => credentials.fmt(f),
            Credentials::Chain(chain) => chain.fmt(f),
            Credentials::Provider(_) => f.write_str("<a credentials provider>"),
        }
    }
}

/// The region when neither code, the environment nor the profile names one.
const DEFAULT_REGION: &str = "us-east-1";

/// A region and the URLs of its endpoint.
struct Target {
    region: String,
    url: String,
    stream_url: String,
}

fn regional_endpoint(region: &str) -> String {
    let suffix = dns_suffix(region);
    format!("https://bedrock-runtime.{region}.{suffix}")
}

/// The URL of `operation` (`converse`, `converse-stream`) for `model`.
fn converse_url(base_url: &str, model: &str, operation: &str) -> String {
    format!(
        "{}/model/{}/{operation}",
        base_url.trim_end_matches('/'),
        crate::percent::uri_encode(model, false)
    )
}

/// Converse's tool choice; `None` is never asked for (see [`BedrockModel::body`]).
fn tool_choice(choice: &ToolChoice, aliases: &Aliases) -> Value {
    match choice {
        ToolChoice::Auto | ToolChoice::None => json!({ "auto": {} }),
        ToolChoice::Required => json!({ "any": {} }),
        ToolChoice::Tool(name) => json!({ "tool": { "name": aliases.provider_name(name) } }),
        // No choice among some tools: the body declares those alone (`allowed::only_named`).
        ToolChoice::Allowed(_, AllowedMode::Auto) => json!({ "auto": {} }),
        ToolChoice::Allowed(_, AllowedMode::Required) => json!({ "any": {} }),
    }
}

/// The text, calls and usage of a Converse answer.
fn response(answer: &Value, aliases: &Aliases) -> Result<ModelResponse, ModelError> {
    let calls = crate::assemble::answer_calls(PROVIDER, Format::Bedrock, answer, aliases)?;
    let content = answer
        .pointer("/output/message/content")
        .and_then(Value::as_array);
    let text: String = (content.into_iter().flatten())
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let thought: Vec<Value> = (content.into_iter().flatten())
        .filter(|block| block.get("reasoningContent").is_some())
        .cloned()
        .collect();
    Ok(ModelResponse {
        reasoning: reasoning(thought),
        text: (!text.is_empty()).then_some(text),
        calls,
        usage: usage(answer.get("usage")),
        ending: ending(answer.get("stopReason").and_then(Value::as_str)),
        finish_reason: answer
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// What Converse's `stopReason` says of how the answer ended.
pub(crate) fn ending(reason: Option<&str>) -> Ending {
    match reason {
        Some("max_tokens" | "model_context_window_exceeded") => Ending::CutAtLimit,
        Some("guardrail_intervened" | "content_filtered") => Ending::Declined,
        Some("malformed_tool_use" | "malformed_model_output") => Ending::MalformedCall,
        _ => Ending::Whole,
    }
}

/// The API's name in a [`Reasoning`] it gave.
pub(super) const REASONING_API: &str = "bedrock";

/// An answer's `reasoningContent` blocks as its reasoning, when there are any: sent back
/// with the answer, as Claude with extended thinking requires once there are tool calls.
pub(super) fn reasoning(blocks: Vec<Value>) -> Option<Reasoning> {
    Reasoning::given(REASONING_API, blocks)
}

/// Converse's token counts. `inputTokens` leaves out what was read from or written to the
/// cache; the neutral count includes both.
fn usage(usage: Option<&Value>) -> Usage {
    let count = |name: &str| {
        usage
            .and_then(|u| u.get(name))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let cached = count("cacheReadInputTokens");
    Usage {
        requests: 1,
        input_tokens: count("inputTokens")
            .saturating_add(cached)
            .saturating_add(count("cacheWriteInputTokens")),
        output_tokens: count("outputTokens"),
        cached_input_tokens: cached,
        reasoning_tokens: 0,
    }
}

impl ChatModel for BedrockModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self.post(false, self.body(request)).await?.send().await?;
            let aliases = request.tools.aliases_for(Format::Bedrock);
            response(&answer, &aliases)
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let opening = Box::pin(async move {
            let body = self.body(request);
            self.post(true, body).await?.open().await
        });
        let aliases = request.tools.aliases_for(Format::Bedrock).into_owned();
        let decoder = stream::stream_decoder(aliases);
        sse::framed_events(
            opening,
            self.api.stream_url.clone(),
            decoder,
            Box::new(FrameReader::default()),
            PROVIDER,
        )
    }

    fn format(&self) -> Option<Format> {
        Some(Format::Bedrock)
    }

    fn model_name(&self) -> &str {
        &self.model
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use tool_core::provider::DeclareOptions;
    use tool_core::{ToolCall, ToolSpec};
    use tool_model::message::Message;
    use tool_model::OfferedTools;

    fn model() -> BedrockModel {
        BedrockModel::new("amazon.nova-pro-v1:0").with_api_key(ApiKey::new("k"))
    }

    fn request(messages: Vec<Message>, choice: ToolChoice) -> ModelRequest {
        let spec = ToolSpec {
            name: "add".into(),
            description: "Adds.".into(),
            parameters: json!({ "type": "object" }),
            output_schema: None,
            metadata: Default::default(),
        };
        let tools = OfferedTools::new(
            vec![spec],
            Some(Format::Bedrock),
            &DeclareOptions::default(),
        );
        let mut request = ModelRequest::new(messages);
        request.tools = Arc::new(tools);
        request.tool_choice = choice;
        request
    }

    #[tokio::test]
    async fn a_region_that_would_name_another_host_is_refused_before_anything_is_sent() {
        let model = model().with_region("evil.example/x?");
        let error = model
            .respond(&request(vec![Message::user("hi")], ToolChoice::Auto))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("not a region name"), "{error}");
    }

    fn with_a_call() -> Vec<Message> {
        vec![
            Message::user("add"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("t1", "add", json!({ "a": 1 }))],
            },
            Message::Tool {
                call_id: Some("t1".into()),
                name: "add".into(),
                text: "1".into(),
                is_error: true,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ]
    }

    #[test]
    fn a_region_set_after_an_endpoint_changes_the_signing_not_the_endpoint() {
        let model = BedrockModel::new("m")
            .with_base_url("https://vpce-1.bedrock-runtime.eu-west-3.vpce.amazonaws.com")
            .with_region("eu-west-3");
        assert_eq!(
            model.url(),
            "https://vpce-1.bedrock-runtime.eu-west-3.vpce.amazonaws.com/model/m/converse"
        );
        assert_eq!(model.api.region, "eu-west-3");
        let model = BedrockModel::new("m").with_region("ap-south-1");
        assert_eq!(
            model.url(),
            "https://bedrock-runtime.ap-south-1.amazonaws.com/model/m/converse"
        );
    }

    #[test]
    fn each_tool_choice_in_converses_words() {
        let choice = |c| {
            model().body(&request(vec![Message::user("hi")], c))["toolConfig"]["toolChoice"].clone()
        };
        assert_eq!(choice(ToolChoice::Auto), json!({ "auto": {} }));
        assert_eq!(choice(ToolChoice::Required), json!({ "any": {} }));
        assert_eq!(
            choice(ToolChoice::Tool("add".into())),
            json!({ "tool": { "name": "add" } })
        );
    }

    #[test]
    fn no_tool_choice_none_but_tools_declared_when_the_history_holds_calls() {
        // Converse refuses tool blocks without `toolConfig`.
        let body = model().body(&request(with_a_call(), ToolChoice::None));
        assert_eq!(body["toolConfig"]["tools"][0]["toolSpec"]["name"], "add");
        assert!(body["toolConfig"].get("toolChoice").is_none(), "{body}");
        let results = &body["messages"][2]["content"][0]["toolResult"];
        assert_eq!(results["status"], "error");
        assert_eq!(results["content"], json!([{ "text": "1" }]));
        // Without calls in the history, no tools at all.
        let body = model().body(&request(vec![Message::user("hi")], ToolChoice::None));
        assert!(body.get("toolConfig").is_none(), "{body}");
    }

    #[test]
    fn a_user_message_after_results_joins_them_and_empty_turns_are_left_out() {
        let mut messages = with_a_call();
        messages.push(Message::Assistant {
            text: Some("  ".into()),
            calls: Vec::new(),
        });
        messages.push(Message::user("and now?"));
        messages.push(Message::user(" "));
        let body = model().body(&request(messages, ToolChoice::Auto));
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        // Converse takes only turns that alternate, none empty, no blank text.
        assert_eq!(roles, ["user", "assistant", "user"]);
        let last = &body["messages"][2]["content"];
        assert_eq!(last[0]["toolResult"]["toolUseId"], "t1");
        assert_eq!(last[1], json!({ "text": "and now?" }));
        assert_eq!(last[2], json!({ "text": "(empty)" }));
        assert_eq!(body["messages"][1]["content"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn tool_use_ids_are_ones_converse_takes_for_the_call_and_its_result() {
        let messages = vec![
            Message::user("go"),
            Message::Assistant {
                text: None,
                calls: vec![
                    ToolCall {
                        id: None,
                        name: "add".into(),
                        arguments: json!({}),
                    },
                    ToolCall::new("fc/1 é", "add", json!({})),
                ],
            },
            Message::Tool {
                call_id: None,
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
            Message::Tool {
                call_id: Some("fc/1 é".into()),
                name: "add".into(),
                text: "2".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ];
        let body = model().body(&request(messages, ToolChoice::Auto));
        let uses = &body["messages"][1]["content"];
        let results = &body["messages"][2]["content"];
        assert_eq!(uses[0]["toolUse"]["toolUseId"], "call_1");
        assert_eq!(uses[1]["toolUse"]["toolUseId"], "fc_1__");
        assert_eq!(results[0]["toolResult"]["toolUseId"], "call_1");
        assert_eq!(results[1]["toolResult"]["toolUseId"], "fc_1__");
    }

    #[test]
    fn ids_stay_unique_and_paired_within_their_turn() {
        let call = |id: Option<&str>| ToolCall {
            id: id.map(str::to_owned),
            name: "add".into(),
            arguments: json!({}),
        };
        let result = |id: Option<&str>| Message::Tool {
            call_id: id.map(str::to_owned),
            name: "add".into(),
            text: "1".into(),
            is_error: false,
            attachments: Vec::new(),
            found_tools: Vec::new(),
        };
        let messages = vec![
            Message::user("go"),
            // A call without an id whose result never came.
            Message::Assistant {
                text: None,
                calls: vec![call(None)],
            },
            Message::user("again"),
            Message::Assistant {
                text: None,
                // An id that is also what a call without one would be given, and two ids that
                // clean to the same.
                calls: vec![
                    call(Some("call_2")),
                    call(None),
                    call(Some("a/b")),
                    call(Some("a+b")),
                ],
            },
            result(Some("call_2")),
            result(None),
            result(Some("a/b")),
            result(Some("a+b")),
        ];
        let body = model().body(&request(messages, ToolChoice::Auto));
        let ids = |turn: usize, kind: &str| -> Vec<String> {
            body["messages"][turn]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b[kind]["toolUseId"].as_str().unwrap().to_owned())
                .collect()
        };
        let uses = ids(3, "toolUse");
        assert_eq!(uses, ["call_2", "call_2_2", "a_b", "a_b_2"]);
        assert_eq!(
            ids(4, "toolResult"),
            uses,
            "each result answers its own call"
        );
        assert_eq!(ids(1, "toolUse"), ["call_1"]);
    }

    #[test]
    fn a_conversation_starts_with_the_user_and_a_turns_results_come_first() {
        let messages = vec![
            Message::Assistant {
                text: Some("Hello, how can I help?".into()),
                calls: vec![ToolCall::new("t1", "add", json!({}))],
            },
            Message::user("Thanks."),
            Message::Tool {
                call_id: Some("t1".into()),
                name: "add".into(),
                text: "3".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ];
        let body = model().body(&request(messages, ToolChoice::Auto));
        let first = json!({ "role": "user", "content": [{ "text": "(empty)" }] });
        assert_eq!(body["messages"][0], first);
        let last = &body["messages"][2]["content"];
        assert_eq!(last[0]["toolResult"]["toolUseId"], "t1");
        assert_eq!(last[1], json!({ "text": "Thanks." }));
        // No messages at all: still a user turn.
        let body = model().body(&request(Vec::new(), ToolChoice::Auto));
        assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn tools_called_under_names_converse_refuses_are_declared_and_called_under_aliases() {
        let messages = vec![
            Message::user("file it"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("t1", "github.create_issue", json!({}))],
            },
            Message::Tool {
                call_id: Some("t1".into()),
                name: "github.create_issue".into(),
                text: "#12".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ];
        let mut request = request(messages, ToolChoice::Auto);
        request.tools = Arc::new(OfferedTools::none());
        let body = model().body(&request);
        let declared = body["toolConfig"]["tools"][0]["toolSpec"]["name"].clone();
        let called = body["messages"][1]["content"][0]["toolUse"]["name"].clone();
        assert_eq!(declared, called);
        let name = declared.as_str().unwrap();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name}"
        );
    }

    #[test]
    fn a_failure_says_so_in_its_text_for_models_without_status() {
        let model =
            BedrockModel::new("meta.llama3-70b-instruct-v1:0").with_api_key(ApiKey::new("k"));
        let body = model.body(&request(with_a_call(), ToolChoice::Auto));
        let result = &body["messages"][2]["content"][0]["toolResult"];
        assert_eq!(result["content"], json!([{ "text": "Error: 1" }]));
    }

    #[test]
    fn with_no_tools_left_the_called_ones_are_declared_for_the_history() {
        let mut request = request(with_a_call(), ToolChoice::Auto);
        request.tools = Arc::new(OfferedTools::none());
        let body = model().body(&request);
        let tools = &body["toolConfig"]["tools"];
        assert_eq!(tools.as_array().unwrap().len(), 1);
        assert_eq!(tools[0]["toolSpec"]["name"], "add");
        assert!(body["toolConfig"].get("toolChoice").is_none());
    }

    #[test]
    fn a_failed_results_status_goes_only_to_the_models_that_take_it() {
        let status = |model_id: &str| {
            let model = BedrockModel::new(model_id).with_api_key(ApiKey::new("k"));
            model.body(&request(with_a_call(), ToolChoice::Auto))["messages"][2]["content"][0]
                ["toolResult"]
                .get("status")
                .cloned()
        };
        assert_eq!(status("amazon.nova-pro-v1:0"), Some(json!("error")));
        assert_eq!(
            status("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some(json!("error"))
        );
        assert_eq!(status("meta.llama3-70b-instruct-v1:0"), None);
        assert_eq!(status("mistral.mistral-large-2407-v1:0"), None);
    }

    #[test]
    fn max_tokens_and_temperature_go_in_the_inference_config() {
        let mut request = request(vec![Message::user("hi")], ToolChoice::Auto);
        assert!(model().body(&request).get("inferenceConfig").is_none());
        request.generation.temperature = Some(0.5);
        let body = model().with_max_tokens(512).body(&request);
        assert_eq!(
            body["inferenceConfig"],
            json!({ "maxTokens": 512, "temperature": 0.5 })
        );
        // Converse takes 0 to 1, and a number.
        request.generation.temperature = Some(1.7);
        assert_eq!(
            model().body(&request)["inferenceConfig"]["temperature"],
            1.0
        );
        request.generation.temperature = Some(f32::NAN);
        assert!(model().body(&request).get("inferenceConfig").is_none());
    }

    #[test]
    fn the_prompt_cache_is_a_cache_point_at_the_end_of_the_last_message() {
        let request = request(with_a_call(), ToolChoice::Auto);
        let body = model()
            .with_prompt_cache(PromptCache::OneHour)
            .body(&request);
        let last = body["messages"][2]["content"].as_array().unwrap();
        assert_eq!(
            last.last(),
            Some(&json!({ "cachePoint": { "type": "default", "ttl": "1h" } }))
        );
        assert_eq!(last.len(), 2, "the result, then the cache point");
        let body = model()
            .with_prompt_cache(PromptCache::FiveMinutes)
            .body(&request);
        let last = body["messages"][2]["content"].as_array().unwrap();
        assert_eq!(
            last.last(),
            Some(&json!({ "cachePoint": { "type": "default" } }))
        );
        // Without it, none.
        let body = model().body(&request);
        assert!(!body.to_string().contains("cachePoint"));
    }

    #[test]
    fn usage_counts_cached_input_as_input() {
        let answer = json!({
            "output": { "message": { "role": "assistant", "content": [{ "text": "hi" }] } },
            "stopReason": "end_turn",
            "usage": { "inputTokens": 10, "outputTokens": 3, "totalTokens": 33,
                       "cacheReadInputTokens": 15, "cacheWriteInputTokens": 5 }
        });
        let response = response(&answer, &Aliases::default()).unwrap();
        assert_eq!(response.text.as_deref(), Some("hi"));
        assert_eq!(response.usage.input_tokens, 30);
        assert_eq!(response.usage.cached_input_tokens, 15);
        assert_eq!(response.usage.output_tokens, 3);
        assert_eq!(response.finish_reason.as_deref(), Some("end_turn"));
    }

    #[tokio::test]
    async fn without_a_key_or_credentials_the_request_is_not_sent() {
        let mut model = model();
        model.api_key = None;
        let home = std::env::temp_dir().join("ai-tool-no-aws-home");
        let nowhere = [
            ("HOME", home.to_str().unwrap()),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ];
        model.api.credentials =
            Credentials::Chain(Arc::new(AwsCredentialChain::from_vars(nowhere)));
        let Err(ModelError::Setup(message)) = model.post(false, json!({})).await else {
            panic!("a setup error");
        };
        assert!(message.contains("AWS_BEARER_TOKEN_BEDROCK"), "{message}");
    }

    #[tokio::test]
    async fn a_credentials_provider_is_asked_at_each_request_and_its_failure_named() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        let provider = aws_credential_types::credential_fn::provide_credentials_fn(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                use aws_credential_types::provider::error::CredentialsError;
                use aws_credential_types::Credentials;
                match n {
                    0 => Ok(Credentials::new("AKID1", "secret-1", None, None, "test")),
                    1 => Ok(Credentials::new("AKID2", "secret-2", None, None, "test")),
                    _ => Err(CredentialsError::provider_error("the token file is gone")),
                }
            }
        });
        let mut model = model().with_credentials_provider(provider);
        model.api_key = None;
        async fn key_id(model: &BedrockModel) -> String {
            let post = model.post(false, json!({})).await.unwrap();
            let signed = post.headers[AUTHORIZATION].to_str().unwrap().to_owned();
            signed.split('/').next().unwrap_or_default().to_owned()
        }
        assert!(key_id(&model).await.ends_with("AKID1"));
        assert!(key_id(&model).await.ends_with("AKID2"));
        let Err(ModelError::Setup(message)) = model.post(false, json!({})).await else {
            panic!("a setup error");
        };
        assert!(
            message.contains("credentials provider failed:")
                && message.ends_with("the token file is gone"),
            "{message}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 3);
        assert!(format!("{model:?}").contains("<a credentials provider>"));
    }

    #[tokio::test]
    async fn an_api_key_wins_over_credentials_and_neither_shows_in_debug() {
        let model = model().with_credentials(AwsCredentials::new("AKID", "the-secret"));
        let post = model.post(false, json!({})).await.unwrap();
        assert_eq!(post.headers[AUTHORIZATION], "Bearer k");
        let shown = format!("{model:?}");
        assert!(
            !shown.contains("the-secret") && !shown.contains("\"k\""),
            "{shown}"
        );
    }
}
