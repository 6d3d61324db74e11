//! The answer a tool's evaluation asks for, and reading it back tolerantly.
//!
//! The answer is a JSON object: `score`, an integer 0..100, and the fields of the tool's
//! `returnStruc` and `argument`s, each typed by the handler's parameter of the same name when
//! there is one (a string otherwise).

use serde_json::{json, Map, Value};
use tool_core::ToolSpec;

use crate::declared::DeclaredTool;
use tool_model::structured::json_object;

/// The JSON Schema of a tool's answer.
pub(crate) fn answer_schema(tool: &DeclaredTool, handler: Option<&ToolSpec>) -> Value {
    let handler_props = handler
        .and_then(|spec| spec.parameters.get("properties"))
        .and_then(Value::as_object);
    let handler_required: Vec<&str> = handler
        .and_then(|spec| spec.parameters.get("required"))
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut score_description = "How well the tool fits the query, from 0 to 100".to_owned();
    for (name, description) in tool.return_struc.iter().flatten() {
        let description = match description {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        if name == "score" {
            score_description = description;
        } else {
            fields.push((name.clone(), description));
        }
    }
    for argument in &tool.arguments {
        if !fields.iter().any(|(n, _)| *n == argument.name) {
            fields.push((argument.name.clone(), argument.description.clone()));
        }
    }
    if tool.return_struc.is_none() && tool.arguments.is_empty() {
        // Nothing says what to extract: ask for the handler's parameters.
        for (name, schema) in handler_props.into_iter().flatten() {
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            fields.push((name.clone(), description.to_owned()));
        }
    }
    let mut properties = Map::new();
    properties.insert(
        "score".into(),
        json!({ "type": "integer", "minimum": 0, "maximum": 100, "description": score_description }),
    );
    let mut required = vec![json!("score")];
    for (name, description) in fields {
        let schema = match handler_props.and_then(|p| p.get(&name)) {
            Some(Value::Object(typed)) => {
                let mut typed = typed.clone();
                if !description.is_empty() && !typed.contains_key("description") {
                    typed.insert("description".into(), json!(description));
                }
                Value::Object(typed)
            }
            _ if description.is_empty() => json!({ "type": "string" }),
            _ => json!({ "type": "string", "description": description }),
        };
        if handler_required.contains(&name.as_str()) {
            required.push(json!(name));
        }
        properties.insert(name, schema);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    // The handler's parameters may refer to its definitions.
    if let Some(defs) = handler.and_then(|spec| spec.parameters.get("$defs")) {
        schema.insert("$defs".into(), defs.clone());
    }
    Value::Object(schema)
}

/// Whether the answer asks for more than the score.
pub(crate) fn asks_for_parameters(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() > 1)
}

/// An answer read as well as it could be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadAnswer {
    /// 0..=100; 0 when missing or unreadable.
    pub score: u8,
    /// Every field but the score, `null`s left out.
    pub params: Map<String, Value>,
    /// Why the score is 0 when it could not be read.
    pub problem: Option<String>,
}

/// Reads a model's answer: the JSON object in it (inside code fences or text too), a score
/// given as a number or a string (`85`, `85.0`, `"85"`), clamped to 0..100.
pub(crate) fn read_answer(text: &str) -> ReadAnswer {
    let Some(mut object) = json_object(text) else {
        return ReadAnswer {
            score: 0,
            params: Map::new(),
            problem: Some(format!("no JSON object in the answer: {}", preview(text))),
        };
    };
    let score = object.shift_remove("score");
    object.retain(|_, v| !v.is_null());
    let (score, problem) = match score {
        None | Some(Value::Null) => (0, Some("the answer has no score".to_owned())),
        Some(value) => match score_of(&value) {
            Some(score) => (score, None),
            None => (0, Some(format!("the score {value} is not a number"))),
        },
    };
    ReadAnswer {
        score,
        params: object,
        problem,
    }
}

fn score_of(value: &Value) -> Option<u8> {
    let number = match value {
        Value::Number(n) => n.as_f64()?,
        Value::String(text) => text
            .trim()
            .trim_end_matches('%')
            .trim()
            .parse::<f64>()
            .ok()?,
        _ => return None,
    };
    if !number.is_finite() {
        return None;
    }
    Some(number.round().clamp(0.0, 100.0) as u8)
}

fn preview(text: &str) -> String {
    const MAX: usize = 80;
    let text = text.trim();
    if text.is_empty() {
        return "(empty)".to_owned();
    }
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fenced_and_surrounded_objects() {
        let fenced = "```json\n{\"score\": 85, \"q\": \"pasta\"}\n```";
        assert_eq!(read_answer(fenced).score, 85);
        assert_eq!(read_answer(fenced).params["q"], "pasta");
        let chatty = "Sure! Here it is: {\"score\": \"90\", \"item\": {\"a\": 1}} Hope it helps.";
        let read = read_answer(chatty);
        assert_eq!((read.score, read.problem), (90, None));
        assert_eq!(read.params["item"], json!({ "a": 1 }));
    }

    #[test]
    fn scores_are_rounded_clamped_or_zero_with_a_reason() {
        assert_eq!(read_answer(r#"{"score": 85.4}"#).score, 85);
        assert_eq!(read_answer(r#"{"score": "77.0"}"#).score, 77);
        assert_eq!(read_answer(r#"{"score": 140}"#).score, 100);
        assert_eq!(read_answer(r#"{"score": -3}"#).score, 0);
        let missing = read_answer(r#"{"query": "x"}"#);
        assert_eq!(
            (missing.score, missing.problem.as_deref()),
            (0, Some("the answer has no score"))
        );
        let unreadable = read_answer(r#"{"score": "high"}"#);
        assert_eq!(unreadable.score, 0);
        assert!(unreadable.problem.unwrap().contains("\"high\""));
        let garbage = read_answer("I cannot help with that.");
        assert!(garbage.problem.unwrap().starts_with("no JSON object"));
    }

    #[test]
    fn nulls_are_absent() {
        let read = read_answer(r#"{"score": 80, "a": null, "b": "x"}"#);
        assert_eq!(
            read.params,
            json!({ "b": "x" }).as_object().unwrap().clone()
        );
    }

    #[test]
    fn the_schema_types_fields_by_the_handler() {
        let mut tool = DeclaredTool::new("details", "Recipe", "p");
        tool.return_struc = Some(
            json!({ "score": "0-100", "item_name": "the recipe", "servings": "how many" })
                .as_object()
                .unwrap()
                .clone(),
        );
        let handler = ToolSpec {
            name: "details".into(),
            description: "d".into(),
            parameters: json!({
                "type": "object",
                "properties": { "item_name": { "type": "string" }, "servings": { "type": "integer", "minimum": 1 } },
                "required": ["item_name"]
            }),
            output_schema: None,
            metadata: Default::default(),
        };
        let schema = answer_schema(&tool, Some(&handler));
        assert_eq!(schema["properties"]["score"]["type"], "integer");
        assert_eq!(schema["properties"]["score"]["description"], "0-100");
        assert_eq!(schema["properties"]["servings"]["type"], "integer");
        assert_eq!(schema["properties"]["servings"]["description"], "how many");
        assert_eq!(schema["required"], json!(["score", "item_name"]));
        let untyped = answer_schema(&tool, None);
        assert_eq!(untyped["properties"]["servings"]["type"], "string");
    }
}
