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
                Content::Image { .. } => None,
            })
            .collect();
        if !texts.is_empty() {
            return texts.join("\n");
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
    }
}
