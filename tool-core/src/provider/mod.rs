//! Each model API's formats, as pure translations of the neutral types: tool declarations
//! ([`declare`]), the model's tool calls ([`parse_calls`]), and results for the next request
//! ([`render_results`]). Hosted tools are in [`hosted`], and what the provider-run ones did is
//! read by [`parse_hosted_results`].
//!
//! One module per API holds everything that changes when that API changes: its declaration,
//! call parsing, result rendering and strict schema profile (`openai_chat`, `openai_responses`,
//! `anthropic`, `gemini`, `bedrock`, `mcp`; the two OpenAI APIs share `openai_strict`). The
//! functions here only pick the module for a [`Format`]: adding an API is one module, one
//! [`Format`] variant and one arm in `api`.

mod aliases;
mod anthropic;
mod bedrock;
mod branch;
mod calls;
mod declare;
mod encoding;
mod gemini;
pub mod hosted;
mod hosted_results;
mod json;
mod limits;
mod mcp;
mod openai_chat;
mod openai_responses;
mod openai_strict;
mod profile;
mod refs;
mod results;
pub mod tool_search;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::name::NameRule;
use crate::ToolSpec;

pub use aliases::Aliases;
pub use anthropic::attachment_block as anthropic_attachment_block;
pub use anthropic::tool_result_content as anthropic_tool_result_content;
pub use bedrock::attachment_block as bedrock_attachment_block;
pub use bedrock::tool_result_content as bedrock_tool_result_content;
pub use calls::{parse_calls, parse_calls_within, ParseError, Provider};
pub use declare::{declaration, declare, Declarations, DeclareOptions, EXAMPLES_HEADING};
pub use gemini::function_response_part as gemini_function_response_part;
pub use gemini::function_response_parts as gemini_function_response_parts;
pub use hosted_results::{parse_hosted_results, HostedResult};
pub use limits::{read_response, ResponseLimits, DEFAULT_RESPONSE_BYTES};
pub use mcp::content_block as mcp_content_block;
pub use openai_chat::tool_message_text as chat_tool_message_text;
pub use openai_responses::attachment_item as responses_attachment_item;
pub use openai_responses::function_call_output as responses_function_call_output;
pub use openai_responses::output_kind as responses_output_kind;
pub use results::{flagged_error_text, render_results, CallResult};

/// What [`crate::profile`] shows: the strict profiles live with their APIs.
pub(crate) mod profiles {
    pub use super::anthropic::{
        anthropic_strict, anthropic_strict_encoded, check_anthropic_strict,
    };
    pub use super::encoding::Encoding;
    pub use super::gemini::{check_gemini, gemini};
    pub use super::openai_strict::{
        check_openai_strict, openai_strict, openai_strict_encoded, OpenAiLimits, OPENAI_LIMITS,
    };
    pub use super::profile::{Finding, Problem, ProfileError};
}

/// A model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// OpenAI Chat Completions (also Assistants and Azure AI Foundry agents).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
    /// Amazon Bedrock Converse.
    Bedrock,
    /// Model Context Protocol `tools/list` and `tools/call`.
    Mcp,
}

/// The module of one API.
fn api(format: Format) -> &'static dyn Api {
    match format {
        Format::OpenAiChat => &openai_chat::OpenAiChat,
        Format::OpenAiResponses => &openai_responses::OpenAiResponses,
        Format::Anthropic => &anthropic::Anthropic,
        Format::Gemini => &gemini::Gemini,
        Format::Bedrock => &bedrock::Bedrock,
        Format::Mcp => &mcp::Mcp,
    }
}

/// What each API's module provides: one implementation per [`Format`].
trait Api: Sync {
    /// The API's name, as people write it.
    fn title(&self) -> &'static str;
    /// The name used on the command line.
    fn name(&self) -> &'static str;
    /// The rule the API's tool names follow.
    fn name_rule(&self) -> &'static NameRule;
    /// One tool's declaration under `name`.
    fn declare(&self, spec: &ToolSpec, name: &str, options: &DeclareOptions) -> declare::Declared;
    /// The value of the request's tools field, from the declarations.
    fn tools(&self, declared: Vec<Value>) -> Value {
        Value::Array(declared)
    }
    /// Whether a response has the fields that mark an answer of this API (with or without
    /// calls).
    fn has_shape(&self, response: &Value) -> bool;
    /// The fields `has_shape` looks for, in words.
    fn signature(&self) -> &'static str;
    /// Finds the tool calls in a response that has this API's shape.
    fn calls(&self, response: &Value, calls: &mut calls::Calls<'_>) -> Result<(), ParseError>;
    /// What the provider-run tools did, in a response that has this API's shape. None for the
    /// APIs without hosted tools.
    fn hosted_results(&self, _response: &Value) -> Vec<hosted_results::HostedResult> {
        Vec::new()
    }
    /// The results of one response's calls, as the next request takes them.
    fn render(&self, results: &[CallResult], aliases: &Aliases) -> Value;
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 6] = [
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Bedrock,
        Format::Mcp,
    ];

    /// The API's name, as people write it: `OpenAI Chat`, `Anthropic`, `MCP`...
    pub fn title(self) -> &'static str {
        api(self).title()
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        api(self).name()
    }

    /// Whether a tool name is accepted as it is. MCP takes the wide alphabet; the model APIs
    /// take 1 to 64 of `A-Z a-z 0-9 _ -`, and Gemini wants a letter or `_` first (see
    /// [`crate::name`]).
    pub fn accepts_name(self, name: &str) -> bool {
        api(self).name_rule().accepts(name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is none of [`Format::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{given}`; expected one of: {}", expected_names())]
pub struct ParseFormatError {
    given: String,
}

impl ParseFormatError {
    /// The name that was given.
    pub fn given(&self) -> &str {
        &self.given
    }
}

fn expected_names() -> String {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    names.join(", ")
}

impl FromStr for Format {
    type Err = ParseFormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| ParseFormatError {
                given: s.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_parses_from_its_name_and_others_are_a_typed_error() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>(), Ok(format));
        }
        let err = "cohere".parse::<Format>().unwrap_err();
        assert_eq!(err.given(), "cohere");
        assert_eq!(
            err.to_string(),
            "unknown format `cohere`; expected one of: openai-chat, openai-responses, anthropic, gemini, bedrock, mcp"
        );
    }
}
