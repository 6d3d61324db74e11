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
    /// Audio, base64-encoded. MCP takes it as audio content; no model API reads audio in a
    /// tool result, so they are told of it in words ([`Content::described`]).
    Audio {
        /// The base64 data.
        data: String,
        /// The media type, such as `audio/wav`.
        mime_type: String,
    },
    /// A file, such as a PDF, by its bytes or at a URL: Anthropic and Bedrock take documents,
    /// OpenAI Responses `input_file`, Gemini 3 PDFs and plain text, MCP resources.
    File {
        /// Where its bytes are.
        source: FileSource,
        /// The media type, such as `application/pdf`.
        mime_type: String,
        /// The file's name, such as `report.pdf`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A link to a resource the client can read (MCP's `resource_link`), not its contents.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// A title for people.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A resource's contents, embedded (MCP's `resource` content).
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its media type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its text or its bytes.
        contents: ResourceContents,
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

/// Where a [`Content::File`]'s bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileSource {
    /// The bytes, base64-encoded.
    Base64 {
        /// The base64 data.
        data: String,
    },
    /// A URL the API fetches itself (OpenAI, Anthropic and Gemini do; elsewhere the model is
    /// given the URL in words).
    Url {
        /// The URL.
        url: String,
    },
}

/// What a [`Content::Resource`] holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Bytes, base64-encoded.
    Blob(String),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image of base64 `data`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// Audio of base64 `data`.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A file of base64 `data`, named `name` (Bedrock and OpenAI show the model the name).
    pub fn file(
        data: impl Into<String>,
        mime_type: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Content::File {
            source: FileSource::Base64 { data: data.into() },
            mime_type: mime_type.into(),
            name: Some(name.into()),
        }
    }

    /// A file at `url`.
    pub fn file_url(url: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::File {
            source: FileSource::Url { url: url.into() },
            mime_type: mime_type.into(),
            name: None,
        }
    }

    /// A link to the resource at `uri`, called `name`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    /// The text of the resource at `uri`, embedded.
    pub fn text_resource(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Content::Resource {
            uri: uri.into(),
            mime_type: Some("text/plain".to_owned()),
            contents: ResourceContents::Text(text.into()),
        }
    }

    /// The bytes (base64 `blob`) of the resource at `uri`, embedded.
    pub fn blob_resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> Self {
        Content::Resource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            contents: ResourceContents::Blob(blob.into()),
        }
    }

    /// Whether this block is an attachment: neither text nor a tool reference.
    pub fn is_attachment(&self) -> bool {
        !matches!(self, Content::Text { .. } | Content::ToolReference { .. })
    }

    /// The bytes this block weighs against a result's cap: every string it holds (its text,
    /// data or URL, and its media type, name and the rest), since each is sent on.
    pub fn byte_len(&self) -> usize {
        let len = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        match self {
            Content::Text { text } => text.len(),
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                data.len() + mime_type.len()
            }
            Content::File {
                source,
                mime_type,
                name,
            } => {
                let source = match source {
                    FileSource::Base64 { data } => data.len(),
                    FileSource::Url { url } => url.len(),
                };
                source + mime_type.len() + len(name)
            }
            Content::ResourceLink {
                uri,
                name,
                title,
                description,
                mime_type,
            } => uri.len() + name.len() + len(title) + len(description) + len(mime_type),
            Content::Resource {
                uri,
                mime_type,
                contents,
            } => {
                let contents = match contents {
                    ResourceContents::Text(text) | ResourceContents::Blob(text) => text.len(),
                };
                uri.len() + len(mime_type) + contents
            }
            Content::ToolReference { tool_name } => tool_name.len(),
        }
    }

    /// The block in words, for an API that has no place for it: a text block is its text, a
    /// text resource its text under its URI, a plain-text file its decoded text, and anything
    /// else a bracketed line naming what it is and where (a URL or URI), so the model knows it
    /// exists and the user can be pointed to it.
    pub fn described(&self) -> String {
        match self {
            Content::Text { text } => text.clone(),
            Content::Image { data, mime_type } => {
                format!(
                    "[image ({mime_type}, {} bytes) not shown]",
                    base64_len(data)
                )
            }
            Content::Audio { data, mime_type } => {
                format!(
                    "[audio ({mime_type}, {} bytes) not shown]",
                    base64_len(data)
                )
            }
            Content::File {
                source,
                mime_type,
                name,
            } => {
                let file = match name {
                    Some(name) => format!("file {name}"),
                    None => "file".to_owned(),
                };
                match source {
                    FileSource::Url { url } => format!("[{file} ({mime_type}) at {url}]"),
                    FileSource::Base64 { data } => match text_of_base64(mime_type, data) {
                        Some(text) => format!("[{file}]\n{text}"),
                        None => format!(
                            "[{file} ({mime_type}, {} bytes) not shown]",
                            base64_len(data)
                        ),
                    },
                }
            }
            Content::ResourceLink {
                uri,
                name,
                title,
                description,
                mime_type,
            } => {
                let mut line = format!("[resource {}", title.as_deref().unwrap_or(name));
                if let Some(mime_type) = mime_type {
                    line.push_str(&format!(" ({mime_type})"));
                }
                line.push_str(&format!(" at {uri}"));
                if let Some(description) = description {
                    line.push_str(&format!(": {description}"));
                }
                line.push(']');
                line
            }
            Content::Resource {
                uri,
                mime_type,
                contents,
            } => {
                let mime_type = mime_type.as_deref().unwrap_or("application/octet-stream");
                match contents {
                    ResourceContents::Text(text) => format!("[resource {uri}]\n{text}"),
                    ResourceContents::Blob(blob) => match text_of_base64(mime_type, blob) {
                        Some(text) => format!("[resource {uri}]\n{text}"),
                        None => format!(
                            "[resource {uri} ({mime_type}, {} bytes) not shown]",
                            base64_len(blob)
                        ),
                    },
                }
            }
            Content::ToolReference { tool_name } => format!("Tool found: {tool_name}"),
        }
    }
}

/// The bytes base64 `data` holds.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end_matches('=');
    data.len() * 3 / 4
}

/// The text of base64 `data` of a textual media type (`text/*`, JSON, XML), when it decodes
/// as UTF-8.
pub(crate) fn text_of_base64(mime_type: &str, data: &str) -> Option<String> {
    use base64::Engine as _;
    let essence = mime_type.split(';').next().unwrap_or_default().trim();
    let textual = essence.starts_with("text/")
        || essence.ends_with("/json")
        || essence.ends_with("+json")
        || essence.ends_with("/xml")
        || essence.ends_with("+xml");
    if !textual {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    String::from_utf8(bytes).ok()
}

impl ToolOutput {
    /// The blocks that are neither text nor tool references: images, audio, files and
    /// resources, in order.
    pub fn attachments(&self) -> impl Iterator<Item = &Content> {
        self.content.iter().filter(|c| c.is_attachment())
    }

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
                _ => None,
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

    #[test]
    fn attachments_read_as_words_where_no_block_takes_them() {
        let said = |c: Content| c.described();
        assert_eq!(
            said(Content::audio("UklGRg==", "audio/wav")),
            "[audio (audio/wav, 4 bytes) not shown]"
        );
        // A textual file or blob is its text; anything else is named with its size or place.
        assert_eq!(
            said(Content::file(
                "c3Vubnk=",
                "text/plain; charset=utf-8",
                "a.txt"
            )),
            "[file a.txt]\nsunny"
        );
        assert_eq!(
            said(Content::file("not base64!", "text/plain", "a.txt")),
            "[file a.txt (text/plain, 8 bytes) not shown]"
        );
        assert_eq!(
            said(Content::blob_resource("r://a", "application/json", "e30=")),
            "[resource r://a]\n{}"
        );
        let link = Content::ResourceLink {
            uri: "r://b".into(),
            name: "b".into(),
            title: Some("The B".into()),
            description: Some("all of b".into()),
            mime_type: Some("text/csv".into()),
        };
        assert_eq!(said(link), "[resource The B (text/csv) at r://b: all of b]");
        assert!(Content::image("AA==", "image/png").is_attachment());
        assert!(!Content::text("x").is_attachment());
    }

    #[test]
    fn every_kind_of_content_goes_to_json_and_back() {
        let content = vec![
            Content::text("t"),
            Content::file("JVBERi0=", "application/pdf", "a.pdf"),
            Content::file_url("https://example.com/a.pdf", "application/pdf"),
            Content::resource_link("r://b", "b"),
            Content::text_resource("r://a", "text"),
            Content::blob_resource("r://c", "image/png", "AA=="),
        ];
        let json = serde_json::to_value(&content).unwrap();
        assert_eq!(
            json[1],
            json!({ "type": "file", "source": { "type": "base64", "data": "JVBERi0=" }, "mime_type": "application/pdf", "name": "a.pdf" })
        );
        assert_eq!(json[4]["contents"], json!({ "text": "text" }));
        let back: Vec<Content> = serde_json::from_value(json).unwrap();
        assert_eq!(back, content);
    }
}
