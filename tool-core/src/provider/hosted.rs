//! Provider-hosted tools: the provider runs them, not you. Declared beside your own tools.
//!
//! | tool | OpenAI Responses | Anthropic | Gemini |
//! |---|---|---|---|
//! | code interpreter | `code_interpreter` | `code_execution` | `codeExecution` |
//! | web search | `web_search` | `web_search` | `googleSearch` |
//! | file search | `file_search` | — | `fileSearch` |
//! | remote MCP server | `mcp` | `mcp_toolset` (beta) | — |
//! | computer use (you run it) | `computer_use_preview` | `computer_20250124` (beta) | — |
//! | text editor (you run it) | — | `text_editor_20250728` | — |
//! | bash (you run it) | — | `bash_20250124` | — |
//! | image generation | `image_generation` | — | — |
//! | URL context | — | — | `urlContext` |
//! | tool search, by words | `tool_search` | `tool_search_tool_bm25_20251119` | — |
//! | tool search, by pattern | — | `tool_search_tool_regex_20251119` | — |
//! | code calling your tools | — | `code_execution_20260120` | — |
//!
//! Chat Completions, Bedrock Converse and MCP have none. A [`HostedTool::Raw`] tool passes the
//! provider's JSON through unchanged, for anything newer than this table and for the kinds none
//! of these APIs has (Azure AI Foundry agents' Logic Apps, Fabric and OpenAPI tools).
//!
//! Two kinds of hosted tool come back differently in a response:
//! - **You run it** (computer use, text editor, bash): the provider declares it, the model calls
//!   it, and [`parse_calls`](super::parse_calls) returns the call as a [`ToolCall`](crate::ToolCall)
//!   named [`HostedTool::call_name`] (`computer`, `str_replace_based_edit_tool`, `bash`), which
//!   you execute and render like any other.
//! - **The provider runs it** (code interpreter, web search, file search, remote MCP, image
//!   generation, URL context): what it did is already in the response, and
//!   [`parse_hosted_results`] reads it as [`HostedResult`]s, text and images you can show.

use serde_json::{json, Value};

use super::Format;

pub use super::hosted_results::{parse_hosted_results, HostedResult};

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
    /// Controls a computer through screenshots, mouse and keyboard. You run it: the calls come
    /// back as [`ToolCall`](crate::ToolCall)s named `computer` (OpenAI `computer_call` items,
    /// Anthropic `tool_use` blocks), and their result is a screenshot.
    ///
    /// Anthropic needs the `computer-use-2025-01-24` beta header; for the newer
    /// `computer_20251124` tool, use [`HostedTool::Raw`].
    ComputerUse {
        /// The display's width in pixels.
        display_width: u32,
        /// The display's height in pixels.
        display_height: u32,
        /// What kind of computer it is (OpenAI asks; Anthropic does not).
        environment: ComputerEnvironment,
    },
    /// Views and edits text files. You run it: the calls come back named
    /// `str_replace_based_edit_tool`, with a `command` (`view`, `str_replace`, `create`,
    /// `insert`) and a `path`.
    TextEditor,
    /// Runs shell commands in a persistent session. You run it: the calls come back named
    /// `bash`, with a `command` or `restart: true`.
    Bash,
    /// Generates images; the images come back in the response (see [`parse_hosted_results`]).
    ImageGeneration,
    /// Reads the pages at the URLs in the prompt; which pages were read comes back in the
    /// response (see [`parse_hosted_results`]).
    UrlContext,
    /// Searches the request's deferred tools (those declared with
    /// [`defer_loading`](crate::ToolMetadata::defer_loading)) and loads the ones it finds; the
    /// model then calls them like any other. See [`tool_search`](super::tool_search) for a
    /// search run by your own retriever instead.
    ToolSearch(SearchBy),
    /// Runs code the model writes in a sandbox, code that may call your tools marked
    /// [`Callers::Code`](crate::Callers) or [`Callers::ModelAndCode`](crate::Callers)
    /// (Anthropic's programmatic tool calling, `code_execution_20260120`). Those calls come back
    /// as any call, and are answered as any call; only their results go back to the code.
    ProgrammaticCalling,
    /// Provider-specific JSON, passed through unchanged to the one format it is for.
    Raw {
        /// The format it is for.
        format: Format,
        /// The declaration.
        declaration: Value,
    },
}

/// How a hosted [`HostedTool::ToolSearch`] matches the deferred tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchBy {
    /// By words of a query, ranked (Anthropic's BM25 search; OpenAI's only search).
    #[default]
    Words,
    /// By a regular expression the model writes (Anthropic only).
    Pattern,
}

/// The kind of computer a [`HostedTool::ComputerUse`] controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputerEnvironment {
    /// A web browser.
    Browser,
    /// macOS.
    Mac,
    /// Windows.
    Windows,
    /// Linux.
    Linux,
    /// Ubuntu.
    Ubuntu,
}

impl ComputerEnvironment {
    /// The name OpenAI's `environment` field takes.
    fn openai_name(self) -> &'static str {
        match self {
            ComputerEnvironment::Browser => "browser",
            ComputerEnvironment::Mac => "mac",
            ComputerEnvironment::Windows => "windows",
            ComputerEnvironment::Linux => "linux",
            ComputerEnvironment::Ubuntu => "ubuntu",
        }
    }
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
            HostedTool::ComputerUse { .. } => "computer use".into(),
            HostedTool::TextEditor => "the text editor".into(),
            HostedTool::Bash => "bash".into(),
            HostedTool::ImageGeneration => "image generation".into(),
            HostedTool::UrlContext => "URL context".into(),
            HostedTool::ProgrammaticCalling => "programmatic tool calling".into(),
            HostedTool::ToolSearch(SearchBy::Words) => "tool search by words".into(),
            HostedTool::ToolSearch(SearchBy::Pattern) => "tool search by pattern".into(),
            HostedTool::Raw { format, .. } => format!("a raw {format} tool"),
        }
    }

    /// The name the model's calls of this tool come back under, for the tools you run yourself
    /// (computer use, text editor, bash); `None` for the tools the provider runs.
    ///
    /// Register a tool of this name to execute the calls [`parse_calls`](super::parse_calls)
    /// returns. Its arguments are the provider's own: Anthropic's `input` (`{"action":
    /// "left_click", "coordinate": [x, y]}`), or OpenAI's `computer_call` item without its
    /// `type`, `id`, `call_id` and `status` (`{"action": {"type": "click", ..},
    /// "pending_safety_checks": []}`). For OpenAI, the first image of the tool's output becomes
    /// the `computer_call_output` screenshot, and pending safety checks are acknowledged only
    /// when the tool returns them, after asking its user, as `acknowledged_safety_checks` in its
    /// structured output.
    pub fn call_name(&self) -> Option<&'static str> {
        match self {
            HostedTool::ComputerUse { .. } => Some(COMPUTER),
            HostedTool::TextEditor => Some("str_replace_based_edit_tool"),
            HostedTool::Bash => Some("bash"),
            _ => None,
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
            (
                HostedTool::ComputerUse {
                    display_width,
                    display_height,
                    environment,
                },
                Format::OpenAiResponses,
            ) => json!({
                "type": "computer_use_preview",
                "display_width": display_width,
                "display_height": display_height,
                "environment": environment.openai_name(),
            }),
            (
                HostedTool::ComputerUse {
                    display_width,
                    display_height,
                    ..
                },
                Format::Anthropic,
            ) => json!({
                "type": "computer_20250124",
                "name": COMPUTER,
                "display_width_px": display_width,
                "display_height_px": display_height,
            }),
            (HostedTool::TextEditor, Format::Anthropic) => {
                json!({ "type": "text_editor_20250728", "name": "str_replace_based_edit_tool" })
            }
            (HostedTool::Bash, Format::Anthropic) => {
                json!({ "type": "bash_20250124", "name": "bash" })
            }
            (HostedTool::ImageGeneration, Format::OpenAiResponses) => {
                json!({ "type": "image_generation" })
            }
            (HostedTool::UrlContext, Format::Gemini) => json!({ "urlContext": {} }),
            (HostedTool::ProgrammaticCalling, Format::Anthropic) => {
                json!({ "type": CODE_CALLER, "name": "code_execution" })
            }
            (HostedTool::ToolSearch(SearchBy::Words), Format::OpenAiResponses) => {
                json!({ "type": "tool_search" })
            }
            (HostedTool::ToolSearch(SearchBy::Words), Format::Anthropic) => {
                json!({ "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25" })
            }
            (HostedTool::ToolSearch(SearchBy::Pattern), Format::Anthropic) => {
                json!({ "type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex" })
            }
            _ => return None,
        })
    }
}

/// The version of Anthropic's code execution tool that calls tools, as tools name it in
/// `allowed_callers`.
pub(crate) const CODE_CALLER: &str = "code_execution_20260120";

/// The name computer use calls come back under, on every API that has it.
pub(crate) const COMPUTER: &str = "computer";

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
    fn computer_use_takes_each_apis_own_display_fields() {
        let computer = HostedTool::ComputerUse {
            display_width: 1280,
            display_height: 800,
            environment: ComputerEnvironment::Ubuntu,
        };
        assert_eq!(
            computer.declaration(Format::OpenAiResponses).unwrap(),
            json!({ "type": "computer_use_preview", "display_width": 1280, "display_height": 800, "environment": "ubuntu" })
        );
        assert_eq!(
            computer.declaration(Format::Anthropic).unwrap(),
            json!({ "type": "computer_20250124", "name": "computer", "display_width_px": 1280, "display_height_px": 800 })
        );
        assert_eq!(
            computer.declaration(Format::Gemini).unwrap_err().hosted_by,
            ["openai-responses", "anthropic"]
        );
    }

    #[test]
    fn tool_search_is_hosted_by_anthropic_both_ways_and_by_openai_by_words() {
        let words = HostedTool::ToolSearch(SearchBy::Words);
        assert_eq!(
            words.declaration(Format::Anthropic).unwrap(),
            json!({ "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25" })
        );
        assert_eq!(
            words.declaration(Format::OpenAiResponses).unwrap(),
            json!({ "type": "tool_search" })
        );
        let pattern = HostedTool::ToolSearch(SearchBy::Pattern);
        assert_eq!(
            pattern.declaration(Format::Anthropic).unwrap()["name"],
            "tool_search_tool_regex"
        );
        let err = pattern.declaration(Format::OpenAiResponses).unwrap_err();
        assert_eq!(err.hosted_by, ["anthropic"]);
        assert_eq!(
            words.declaration(Format::Gemini).unwrap_err().hosted_by,
            ["openai-responses", "anthropic"]
        );
    }

    #[test]
    fn only_the_tools_you_run_have_a_call_name() {
        assert_eq!(HostedTool::Bash.call_name(), Some("bash"));
        assert_eq!(
            HostedTool::TextEditor.call_name(),
            Some("str_replace_based_edit_tool")
        );
        assert_eq!(HostedTool::ImageGeneration.call_name(), None);
        assert_eq!(HostedTool::UrlContext.call_name(), None);
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
