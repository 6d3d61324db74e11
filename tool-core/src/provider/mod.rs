//! Each model API's formats, as pure translations of the neutral types: tool declarations
//! (`declare`), the model's tool calls (`parse_calls`), and results for the next request
//! (`render_results`). Hosted tools are in [`hosted`].

mod aliases;
mod calls;
mod declare;
pub mod hosted;
mod results;

use std::fmt;
use std::str::FromStr;

pub use aliases::Aliases;
pub use calls::{parse_calls, ParseError, Provider};
pub use declare::{declaration, declare, Declarations, DeclareOptions};
pub use results::{render_results, CallResult};

/// A model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
        match self {
            Format::OpenAiChat => "OpenAI Chat",
            Format::OpenAiResponses => "OpenAI Responses",
            Format::Anthropic => "Anthropic",
            Format::Gemini => "Gemini",
            Format::Bedrock => "Bedrock",
            Format::Mcp => "MCP",
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai-chat",
            Format::OpenAiResponses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Bedrock => "bedrock",
            Format::Mcp => "mcp",
        }
    }

    /// Whether a tool name is accepted as it is. MCP takes the wide alphabet; the model APIs
    /// take 1 to 64 of `A-Z a-z 0-9 _ -`, and Gemini wants a letter or `_` first.
    pub fn accepts_name(self, name: &str) -> bool {
        match self {
            Format::Mcp => crate::name::check_wide(name).is_ok(),
            Format::Gemini => crate::name::check_portable(name).is_ok(),
            _ => {
                (1..=64).contains(&name.len())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            }
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}
