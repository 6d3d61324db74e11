//! Tools that take plain text instead of JSON arguments: OpenAI's custom tools, with free text
//! or text a grammar accepts.
//!
//! The tool's canonical schema is an object of one string, [`TEXT_INPUT`], so that every API
//! and the executor's checks see it as any tool: OpenAI Chat and Responses declare it as a
//! `custom` tool (with the grammar, where one is given) and their `custom` calls' text arrives
//! as that string; the other APIs declare it as a function of that one argument. A regular
//! expression is also the string's `pattern`, anchored at both ends, so the executor checks
//! the text before the tool runs, as JSON Schema reads the expression (ECMA-262; the common
//! syntax reads the same as OpenAI's). A Lark grammar is OpenAI's to check.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The one argument a text tool's text arrives in.
pub const TEXT_INPUT: &str = "input";

/// What text a tool takes ([`ToolMetadata::text_input`](crate::ToolMetadata::text_input)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "syntax", rename_all = "snake_case")]
pub enum TextInput {
    /// Any text.
    Free,
    /// Text this Lark grammar accepts (checked by OpenAI, not here).
    Lark {
        /// The grammar.
        definition: String,
    },
    /// Text this regular expression matches whole (checked by OpenAI and by the executor).
    Regex {
        /// The expression.
        definition: String,
    },
}

impl TextInput {
    /// The canonical schema of a tool taking this text: an object of one required string,
    /// [`TEXT_INPUT`], described, and for a regular expression with its anchored `pattern`.
    pub fn schema(&self) -> Value {
        let mut input = json!({ "type": "string" });
        match self {
            TextInput::Free => {}
            TextInput::Lark { definition } => {
                input["description"] =
                    json!(format!("Text this Lark grammar accepts:\n{definition}"));
            }
            TextInput::Regex { definition } => {
                input["description"] = json!(format!(
                    "Text this regular expression matches whole: {definition}"
                ));
                input["pattern"] = json!(format!("^(?:{definition})$"));
            }
        }
        json!({
            "type": "object",
            "properties": { TEXT_INPUT: input },
            "required": [TEXT_INPUT],
            "additionalProperties": false
        })
    }

    /// The format of OpenAI Responses' custom tool: `{"type": "text"}` or
    /// `{"type": "grammar", "syntax", "definition"}`.
    pub(crate) fn responses_format(&self) -> Value {
        match self.grammar() {
            None => json!({ "type": "text" }),
            Some((syntax, definition)) => {
                json!({ "type": "grammar", "syntax": syntax, "definition": definition })
            }
        }
    }

    /// The format of OpenAI Chat's custom tool: `{"type": "text"}` or
    /// `{"type": "grammar", "grammar": {"syntax", "definition"}}`.
    pub(crate) fn chat_format(&self) -> Value {
        match self.grammar() {
            None => json!({ "type": "text" }),
            Some((syntax, definition)) => json!({
                "type": "grammar",
                "grammar": { "syntax": syntax, "definition": definition }
            }),
        }
    }

    fn grammar(&self) -> Option<(&'static str, &str)> {
        match self {
            TextInput::Free => None,
            TextInput::Lark { definition } => Some(("lark", definition)),
            TextInput::Regex { definition } => Some(("regex", definition)),
        }
    }
}

/// A text tool's call arguments from the text the model wrote.
pub fn text_arguments(text: &str) -> Value {
    json!({ TEXT_INPUT: text })
}

/// The text of a text tool's call arguments (`""` when there is none).
pub fn input_text(arguments: &Value) -> &str {
    arguments
        .get(TEXT_INPUT)
        .and_then(Value::as_str)
        .unwrap_or_default()
}
