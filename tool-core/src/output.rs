use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tool gives back to the model.
///
/// Text content, structured JSON, or both. A value converted by default is kept as structured
/// JSON and rendered to text only when a provider needs text, so nothing is serialized twice.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Content blocks, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Content>,
    /// The structured result, when the tool returned data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Whether the output reports a failure the model should see as one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// One block of tool output content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 data.
        data: String,
        /// The media type, such as `image/png`.
        mime_type: String,
    },
    /// A deferred tool a tool search found, for the model to load
    /// ([`ToolMetadata::defer_loading`](crate::ToolMetadata::defer_loading)). Anthropic takes
    /// it as a `tool_reference` block, OpenAI Responses as the tool's declaration in a
    /// `tool_search_output`; elsewhere it reads as the tool's name.
    ToolReference {
        /// The tool's name.
        tool_name: String,
    },
}

impl ToolOutput {
    /// Output of one text block.
    #[inline]
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::Text { text: text.into() }],
            ..Default::default()
        }
    }

    /// Output of structured JSON.
    #[inline]
    pub fn json(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            ..Default::default()
        }
    }

    /// Output that tells the model the call failed, with text it can act on.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            is_error: true,
            ..ToolOutput::text(text)
        }
    }

    /// Output with nothing in it: what a tool returning `()` gives.
    #[inline]
    pub fn empty() -> Self {
        ToolOutput::default()
    }

    /// Output naming deferred tools a tool search found, for the model to load
    /// ([`Content::ToolReference`]).
    pub fn tool_references<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        ToolOutput {
            content: names
                .into_iter()
                .map(|name| Content::ToolReference {
                    tool_name: name.into(),
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The names of the deferred tools this output loads ([`Content::ToolReference`]).
    pub fn referenced_tools(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|c| match c {
            Content::ToolReference { tool_name } => Some(tool_name.as_str()),
            _ => None,
        })
    }

    /// Adds a content block.
    pub fn with_content(mut self, content: Content) -> Self {
        self.content.push(content);
        self
    }

    /// The output as one text: the text blocks joined by newlines, or the structured JSON when
    /// there is no text.
    pub fn to_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } | Content::ToolReference { .. } => None,
            })
            .collect();
        if !texts.is_empty() {
            return texts.join("\n");
        }
        let found: Vec<&str> = self.referenced_tools().collect();
        if !found.is_empty() {
            return format!("Tools found: {}", found.join(", "));
        }
        match &self.structured {
            Some(Value::String(s)) => s.clone(),
            Some(value) => value.to_string(),
            None => String::new(),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn to_text_prefers_text_blocks_then_structured_json() {
        assert_eq!(ToolOutput::text("hi").to_text(), "hi");
        assert_eq!(ToolOutput::json(json!({"a": 1})).to_text(), r#"{"a":1}"#);
        assert_eq!(ToolOutput::json(json!("plain")).to_text(), "plain");
        assert_eq!(ToolOutput::empty().to_text(), "");
        let both = ToolOutput::json(json!(1)).with_content(Content::Text { text: "one".into() });
        assert_eq!(both.to_text(), "one");
        let found = ToolOutput::tool_references(["get_weather", "get_time"]);
        assert_eq!(found.to_text(), "Tools found: get_weather, get_time");
        assert_eq!(
            found.referenced_tools().collect::<Vec<_>>(),
            ["get_weather", "get_time"]
        );
    }
}
