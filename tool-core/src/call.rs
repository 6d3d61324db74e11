use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call, as a model asked for it, in no provider's format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, used to match the result to the call.
    /// Some APIs (older Gemini) give none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's real name (aliases given to a provider are already mapped back).
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

impl ToolCall {
    /// A call with an id.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: Some(id.into()),
            name: name.into(),
            arguments,
        }
    }
}
