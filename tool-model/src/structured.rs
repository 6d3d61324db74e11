//! Structured output: a JSON Schema the model's answer must follow
//! ([`ModelRequest::response_format`](crate::ModelRequest::response_format)), and how each API
//! is asked for it.
//!
//! The schema is canonical (as validation reads it); each client renders it with its API's
//! profile from `tool-core`. When the profile cannot say it as it is (it would encode maps or
//! untyped values, which the answer would then carry encoded), the schema is sent as written,
//! not strict.

use serde_json::{json, Map, Value};
use tool_core::profile::{anthropic_strict_encoded, gemini, openai_strict_encoded};

/// A JSON Schema for the answer's text: the model answers with one JSON object that follows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFormat {
    /// A name for the schema (OpenAI requires one: letters, digits, `_` and `-`).
    pub name: String,
    /// The schema, canonical: its root is an object.
    pub schema: Value,
}

impl ResponseFormat {
    /// A response format of this name and schema.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        ResponseFormat {
            name: name.into(),
            schema,
        }
    }

    /// The name as OpenAI takes it: other characters become `_`, at most 64.
    fn openai_name(&self) -> String {
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        if name.is_empty() {
            "answer".to_owned()
        } else {
            name
        }
    }

    /// The schema under OpenAI's strict profile, when it says the same thing; `None` when the
    /// schema must go non-strict.
    fn openai_strict(&self) -> Option<Value> {
        match openai_strict_encoded(&self.schema) {
            Ok((strict, encoding)) if encoding.is_identity() => Some(strict),
            _ => None,
        }
    }

    /// Chat Completions' `response_format`.
    pub fn openai_chat(&self) -> Value {
        let (schema, strict) = match self.openai_strict() {
            Some(strict) => (strict, true),
            None => (self.schema.clone(), false),
        };
        json!({
            "type": "json_schema",
            "json_schema": { "name": self.openai_name(), "schema": schema, "strict": strict }
        })
    }

    /// Responses' `text` (`{"format": {..}}`).
    pub fn openai_responses(&self) -> Value {
        let (schema, strict) = match self.openai_strict() {
            Some(strict) => (strict, true),
            None => (self.schema.clone(), false),
        };
        json!({
            "format": { "type": "json_schema", "name": self.openai_name(), "schema": schema, "strict": strict }
        })
    }

    /// Anthropic's `output_config` (`{"format": {"type": "json_schema", "schema": ..}}`), when
    /// Anthropic's structured-output profile (the one its strict tools share) can say the
    /// schema without encoding maps or untyped values; `None` when it must go into the
    /// instructions instead. The answer is checked against the schema as written either way.
    pub fn anthropic(&self) -> Option<Value> {
        match anthropic_strict_encoded(&self.schema) {
            Ok((schema, encoding)) if encoding.is_identity() => {
                Some(json!({ "format": { "type": "json_schema", "schema": schema } }))
            }
            _ => None,
        }
    }

    /// The instructions asking for this JSON object, for a request that cannot ask for it
    /// otherwise (a schema Anthropic's profile cannot say; Gemini 2 refuses JSON mode beside
    /// tools).
    pub fn in_instructions(&self, instructions: Option<&str>) -> String {
        let schema = serde_json::to_string(&self.schema).unwrap_or_default();
        let ask = format!(
            "Answer with one JSON object and nothing else (no code fence, no text around it). \
             It must follow this JSON Schema:\n{schema}"
        );
        match instructions {
            Some(instructions) => format!("{instructions}\n\n{ask}"),
            None => ask,
        }
    }

    /// Gemini's `generationConfig` fields: `responseMimeType` and `responseSchema` (the OpenAPI
    /// subset), or `responseJsonSchema` when the subset cannot say it.
    pub fn gemini(&self) -> Vec<(&'static str, Value)> {
        let mime = ("responseMimeType", json!("application/json"));
        match gemini(&self.schema) {
            Ok(schema) => vec![mime, ("responseSchema", schema)],
            Err(_) => vec![mime, ("responseJsonSchema", self.schema.clone())],
        }
    }
}

/// The first JSON object in the text: the whole text, the inside of a code fence, or the
/// first `{` that starts a complete object. What a reasoning model thought aloud before
/// `</think>` (DeepSeek R1, Qwen3 and others behind OpenAI-compatible servers) is not the
/// answer, and a draft object in it is not read; an answer that is an object whole is read
/// whole, whatever its strings say.
pub fn json_object(text: &str) -> Option<Map<String, Value>> {
    if let Ok(Value::Object(object)) = serde_json::from_str(text.trim()) {
        return Some(object);
    }
    match text.find(THOUGHT_END) {
        None => first_object(text, |_, _| true),
        Some(end) => first_object(&text[end + THOUGHT_END.len()..], |_, _| true)
            // `</think>` in a string of the answer: the object that holds it.
            .or_else(|| first_object(text, |start, stop| start < end && end < stop)),
    }
}

/// The first `{` in the text that starts a complete object whose span (its first byte and
/// the byte after its last) `fits`.
fn first_object(text: &str, fits: impl Fn(usize, usize) -> bool) -> Option<Map<String, Value>> {
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(object))) = stream.next() {
            if fits(start, start + stream.byte_offset()) {
                return Some(object);
            }
        }
        from = start + 1;
    }
    None
}

/// What ends the thinking a reasoning model writes before its answer in the answer's text.
const THOUGHT_END: &str = "</think>";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_object_in_a_models_thinking_is_not_the_answer() {
        let text = "<think>maybe {\"score\": 20}... no, it fits.</think>\n{\"score\": 92}";
        assert_eq!(json_object(text).unwrap()["score"], 92);
        // A server that left the opening tag out.
        let text = "It could be {\"score\": 20}.</think>{\"score\": 92}";
        assert_eq!(json_object(text).unwrap()["score"], 92);
        assert_eq!(json_object("{\"score\": 7}").unwrap()["score"], 7);
        // An answer whose strings hold the words is read whole.
        let html = r#"{"html": "<think>x</think>"}"#;
        assert_eq!(json_object(html).unwrap()["html"], "<think>x</think>");
        let html = r#"Here: {"html": "</think>"}."#;
        assert_eq!(json_object(html).unwrap()["html"], "</think>");
        // An answer without an object has none, whatever the thinking drafted.
        assert!(json_object("<think>maybe {\"score\": 20}</think>I cannot say.").is_none());
    }

    fn score_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "score": { "type": "integer", "minimum": 0, "maximum": 100 },
                "query": { "type": "string" }
            },
            "required": ["score"]
        })
    }

    #[test]
    fn openai_gets_a_strict_schema_with_every_property_required() {
        let format = ResponseFormat::new("tool search", score_schema());
        let chat = format.openai_chat();
        assert_eq!(chat["type"], "json_schema");
        assert_eq!(chat["json_schema"]["name"], "tool_search");
        assert_eq!(chat["json_schema"]["strict"], true);
        assert_eq!(chat["json_schema"]["schema"]["additionalProperties"], false);
        assert_eq!(
            chat["json_schema"]["schema"]["required"],
            json!(["score", "query"])
        );
        let responses = format.openai_responses();
        assert_eq!(responses["format"]["type"], "json_schema");
        assert_eq!(responses["format"]["strict"], true);
    }

    #[test]
    fn a_map_in_the_schema_goes_non_strict_as_written() {
        let schema = json!({
            "type": "object",
            "properties": { "score": { "type": "integer" }, "tags": { "type": "object" } }
        });
        let chat = ResponseFormat::new("t", schema.clone()).openai_chat();
        assert_eq!(chat["json_schema"]["strict"], false);
        assert_eq!(chat["json_schema"]["schema"], schema);
    }

    #[test]
    fn gemini_and_anthropic_renderings() {
        let format = ResponseFormat::new("t", score_schema());
        let fields = format.gemini();
        assert_eq!(fields[0], ("responseMimeType", json!("application/json")));
        assert_eq!(fields[1].0, "responseSchema");
        let system = format.in_instructions(Some("Be brief."));
        assert!(
            system.starts_with("Be brief.\n\nAnswer with one JSON object"),
            "{system}"
        );
        assert!(system.contains("\"score\""), "{system}");
    }
}
