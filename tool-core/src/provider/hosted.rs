//! Provider-hosted tools: the provider runs them, not you. Declared beside your own tools.
//!
//! | tool | OpenAI Responses | Anthropic | Gemini |
//! |---|---|---|---|
//! | code interpreter | `code_interpreter` | `code_execution` | `codeExecution` |
//! | web search | `web_search` | `web_search` | `googleSearch` |
//! | file search | `file_search` | — | `fileSearch` |
//! | remote MCP server | `mcp` | `mcp_toolset` (beta) | — |
//!
//! Chat Completions, Bedrock Converse and MCP have none. A [`HostedTool::Raw`] tool passes the
//! provider's JSON through unchanged, for anything newer than this table.

use serde_json::{json, Value};

use super::Format;

/// A tool the provider hosts.
#[derive(Debug, Clone, PartialEq)]
pub enum HostedTool {
    /// Runs code the model writes in a sandbox.
    CodeInterpreter,
    /// Searches the web.
    WebSearch,
    /// Searches your uploaded files.
    FileSearch {
        /// The stores to search (OpenAI vector store ids, Gemini file search store names).
        stores: Vec<String>,
    },
    /// Tools of a remote MCP server, called by the provider.
    RemoteMcp {
        /// A short label for the server.
        label: String,
        /// The server's URL.
        url: String,
    },
    /// Provider-specific JSON, passed through unchanged to the one format it is for.
    Raw {
        /// The format it is for.
        format: Format,
        /// The declaration.
        declaration: Value,
    },
}

/// A hosted tool the format does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tool} is not hosted by {format}; it is hosted by: {}", if .hosted_by.is_empty() { "no provider".to_owned() } else { .hosted_by.join(", ") })]
pub struct HostedError {
    /// The tool, in words.
    pub tool: String,
    /// The format asked for.
    pub format: Format,
    /// The formats that have it.
    pub hosted_by: Vec<&'static str>,
}

impl HostedTool {
    fn label(&self) -> String {
        match self {
            HostedTool::CodeInterpreter => "the code interpreter".into(),
            HostedTool::WebSearch => "web search".into(),
            HostedTool::FileSearch { .. } => "file search".into(),
            HostedTool::RemoteMcp { .. } => "a remote MCP server".into(),
            HostedTool::Raw { format, .. } => format!("a raw {format} tool"),
        }
    }

    /// The declaration for `format`, or an error listing the formats that have this tool.
    pub fn declaration(&self, format: Format) -> Result<Value, HostedError> {
        if let Some(value) = self.try_declaration(format) {
            return Ok(value);
        }
        let hosted_by = Format::ALL
            .iter()
            .filter(|f| self.try_declaration(**f).is_some())
            .map(|f| f.name())
            .collect();
        Err(HostedError {
            tool: self.label(),
            format,
            hosted_by,
        })
    }

    fn try_declaration(&self, format: Format) -> Option<Value> {
        Some(match (self, format) {
            (
                HostedTool::Raw {
                    format: target,
                    declaration,
                },
                f,
            ) if *target == f => declaration.clone(),
            (HostedTool::CodeInterpreter, Format::OpenAiResponses) => {
                json!({ "type": "code_interpreter", "container": { "type": "auto" } })
            }
            (HostedTool::CodeInterpreter, Format::Anthropic) => {
                json!({ "type": "code_execution_20250825", "name": "code_execution" })
            }
            (HostedTool::CodeInterpreter, Format::Gemini) => json!({ "codeExecution": {} }),
            (HostedTool::WebSearch, Format::OpenAiResponses) => json!({ "type": "web_search" }),
            (HostedTool::WebSearch, Format::Anthropic) => {
                json!({ "type": "web_search_20250305", "name": "web_search" })
            }
            (HostedTool::WebSearch, Format::Gemini) => json!({ "googleSearch": {} }),
            (HostedTool::FileSearch { stores }, Format::OpenAiResponses) => {
                json!({ "type": "file_search", "vector_store_ids": stores })
            }
            (HostedTool::FileSearch { stores }, Format::Gemini) => {
                json!({ "fileSearch": { "fileSearchStoreNames": stores } })
            }
            (HostedTool::RemoteMcp { label, url }, Format::OpenAiResponses) => {
                json!({ "type": "mcp", "server_label": label, "server_url": url, "require_approval": "never" })
            }
            (HostedTool::RemoteMcp { label, .. }, Format::Anthropic) => {
                json!({ "type": "mcp_toolset", "mcp_server_name": label })
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_search_maps_to_each_provider_that_has_it() {
        assert_eq!(
            HostedTool::WebSearch.declaration(Format::Gemini).unwrap(),
            json!({ "googleSearch": {} })
        );
        assert_eq!(
            HostedTool::WebSearch
                .declaration(Format::OpenAiResponses)
                .unwrap()["type"],
            json!("web_search")
        );
    }

    #[test]
    fn asking_a_provider_without_it_lists_those_with_it() {
        let err = HostedTool::FileSearch { stores: vec![] }
            .declaration(Format::Bedrock)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "file search is not hosted by bedrock; it is hosted by: openai-responses, gemini"
        );
        let err = HostedTool::CodeInterpreter
            .declaration(Format::OpenAiChat)
            .unwrap_err();
        assert_eq!(err.hosted_by, ["openai-responses", "anthropic", "gemini"]);
    }

    #[test]
    fn raw_tools_pass_through_unchanged_for_their_format_only() {
        let raw = HostedTool::Raw {
            format: Format::Anthropic,
            declaration: json!({ "type": "bash_20250124", "name": "bash" }),
        };
        assert_eq!(
            raw.declaration(Format::Anthropic).unwrap(),
            json!({ "type": "bash_20250124", "name": "bash" })
        );
        assert_eq!(
            raw.declaration(Format::Gemini).unwrap_err().hosted_by,
            ["anthropic"]
        );
    }
}
