//! The HTTP clients of the model APIs for `ai-tool`, one feature each. Every client implements
//! [`ChatModel`](tool_model::ChatModel), the contract of `tool-model`, and so plugs into the
//! agent loop (`tool-agent`) or anything else that speaks it.
//!
//! | Client | API | Feature |
//! |---|---|---|
//! | `OpenAiChatModel` | OpenAI Chat Completions (and any compatible server: llama.cpp, vLLM, Ollama) | `openai` |
//! | `OpenAiResponsesModel` | OpenAI Responses | `openai` |
//! | `AnthropicModel` | Anthropic Messages (and Claude on Vertex AI with `vertex`) | `anthropic` |
//! | `GeminiModel` | Gemini `generateContent` (and Vertex AI with `vertex`) | `gemini` |
//! | `BedrockModel` | Amazon Bedrock Converse, signed with SigV4 or a Bedrock API key | `bedrock` |
//!
//! No feature is on by default. HTTPS is the `rustls` feature (the facade `ai-tool` turns it
//! on by default); without it the clients speak plain HTTP, to local servers.
//!
//! Every client is a [`HttpModel`] of its API (`OpenAiChatModel` is `HttpModel<OpenAiChat>`),
//! and so shares one HTTP set-up, written once: an API key ([`ApiKey`]) read from the API's
//! variable and checked before a request is sent, extra headers, a base URL, a [`RetryPolicy`]
//! for 429 and 5xx answers, connect and read timeouts ([`DEFAULT_CONNECT_TIMEOUT`],
//! [`DEFAULT_READ_TIMEOUT`]), no redirects, fields added to the body, caps on what an answer
//! may hold, and how answers are generated ([`Generation`](tool_model::Generation): length,
//! temperature, stop sequences), each written in the API's own fields.

#![warn(missing_docs)]
// The shared helpers (HTTP, streams, credentials' files) serve some APIs and not others: with
// only some of the features on, what the others use is left unused.
#![cfg_attr(
    not(all(feature = "openai", feature = "vertex", feature = "bedrock")),
    allow(dead_code, unused_imports, unused_macros)
)]

mod allowed;
#[cfg(feature = "anthropic")]
mod anthropic;
mod assemble;
#[cfg(feature = "bedrock")]
mod aws;
#[cfg(feature = "bedrock")]
mod aws_frames;
#[cfg(feature = "bedrock")]
mod bedrock;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "gemini")]
mod gemini;
#[cfg(feature = "vertex")]
mod google;
#[cfg(all(
    not(feature = "vertex"),
    any(feature = "anthropic", feature = "gemini")
))]
#[path = "google/without_vertex.rs"]
mod google;
mod http;
mod model;
#[cfg(feature = "openai")]
mod openai_chat;
#[cfg(feature = "openai")]
mod openai_responses;
mod percent;
#[cfg(any(feature = "bedrock", feature = "vertex"))]
mod refreshing;
mod sse;
mod tool_ids;

#[cfg(feature = "anthropic")]
pub use anthropic::{Anthropic, AnthropicModel};
#[cfg(feature = "bedrock")]
pub use aws::{AwsCredentialChain, AwsCredentials};
#[cfg(feature = "bedrock")]
pub use bedrock::{Bedrock, BedrockModel};
#[cfg(feature = "gemini")]
pub use gemini::{Gemini, GeminiModel};
#[cfg(feature = "vertex")]
pub use google::vertex::OnVertex;
#[cfg(feature = "vertex")]
pub use google::GoogleCredentials;
pub use http::{ApiKey, RetryPolicy, DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT};
pub use model::{Api, HttpModel};
#[cfg(feature = "openai")]
pub use openai_chat::{OpenAiChat, OpenAiChatModel};
#[cfg(feature = "openai")]
pub use openai_responses::{OpenAiResponses, OpenAiResponsesModel};
