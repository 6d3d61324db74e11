//! Gemini `generateContent`: `tools` of one `{"functionDeclarations": [..]}`, calls as
//! `functionCall` parts of each candidate, results as one user content of `functionResponse`
//! parts. Gemini has no strict mode; its `parameters` take the OpenAPI 3.0 subset below
//! (`parametersJsonSchema` takes the canonical schema as it is).
//!
//! The subset: `nullable: true` instead of null unions; string-only enums; `const` as a
//! one-value enum; `oneOf` as `anyOf`; refs inlined, and a recursive schema refused; no
//! `additionalProperties`, `$schema`, `title`, `examples` or exclusive bounds; formats other
//! than `enum` and `date-time` moved into the description.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::hosted_results::{plain, source, HostedResult};
use super::json::{array, object_arguments};
use super::profile::{
    describe, move_to_description, note, pointer_push, simplify_combinators, types_of, verdict,
    walk_with_pointer, Finding, Problem, ProfileError,
};
use super::results::{essence, is_one_of, placed};
use super::{Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, PORTABLE};
use crate::{Content, FileSource, ResourceContents, ToolOutput, ToolSpec};

pub(crate) struct Gemini;

impl Api for Gemini {
    fn title(&self) -> &'static str {
        "Gemini"
    }

    fn name(&self) -> &'static str {
        "gemini"
    }

    fn name_rule(&self) -> &'static NameRule {
        &PORTABLE
    }

    fn declare(&self, spec: &ToolSpec, name: &str, options: &DeclareOptions) -> Declared {
        let description = spec.description.as_str();
        let full = || json!({ "name": name, "description": description, "parametersJsonSchema": spec.parameters });
        if options.gemini_json_schema {
            return Declared::plain(full());
        }
        match gemini(&spec.parameters) {
            // A tool without parameters is declared without them: Gemini (on Vertex AI
            // always) refuses an object whose `properties` are empty.
            Ok(parameters) if takes_nothing(&parameters) => {
                Declared::plain(json!({ "name": name, "description": description }))
            }
            Ok(parameters) => Declared::plain(
                json!({ "name": name, "description": description, "parameters": parameters }),
            ),
            Err(e) => {
                let note = format!(
                    "`{}` is declared with `parametersJsonSchema`: {e}",
                    spec.name
                );
                tracing::warn!(tool = %spec.name, "{note}");
                Declared {
                    note: Some(note),
                    ..Declared::plain(full())
                }
            }
        }
    }

    fn tools(&self, declared: Vec<Value>) -> Value {
        json!([{ "functionDeclarations": declared }])
    }

    fn has_shape(&self, response: &Value) -> bool {
        // A prompt blocked by a safety filter has feedback and no candidates.
        response.get("candidates").is_some_and(Value::is_array)
            || response.get("promptFeedback").is_some()
    }

    fn signature(&self) -> &'static str {
        "`candidates` array"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        // The first candidate only: with `candidateCount` above 1 the others are alternatives.
        for candidate in array(response.get("candidates")).take(1) {
            let parts = candidate.get("content").and_then(|c| c.get("parts"));
            for call in array(parts).filter_map(|p| p.get("functionCall")) {
                calls.push(
                    call.get("id"),
                    call.get("name"),
                    object_arguments(call.get("args")),
                )?;
            }
        }
        Ok(())
    }

    fn hosted_results(&self, response: &Value) -> Vec<HostedResult> {
        let mut found: Vec<HostedResult> = Vec::new();
        for candidate in array(response.get("candidates")) {
            let parts = candidate.get("content").and_then(|c| c.get("parts"));
            for part in array(parts) {
                if let Some(code) = part.get("executableCode") {
                    let text = code.get("code").map(plain).unwrap_or_default();
                    found.push(HostedResult::text(
                        "code_execution",
                        code.get("id"),
                        text,
                        part,
                    ));
                } else if let Some(outcome) = part.get("codeExecutionResult") {
                    let text = outcome.get("output").map(plain).unwrap_or_default();
                    let failed =
                        outcome.get("outcome").and_then(Value::as_str) != Some("OUTCOME_OK");
                    let result = match found.last_mut() {
                        Some(code)
                            if code.tool == "code_execution"
                                && code.raw.get("executableCode").is_some() =>
                        {
                            code.raw = json!([code.raw.clone(), part]);
                            code.push_text(text);
                            code
                        }
                        _ => {
                            found.push(HostedResult::text(
                                "code_execution",
                                outcome.get("id"),
                                text,
                                part,
                            ));
                            found.last_mut().expect("just pushed")
                        }
                    };
                    result.output.is_error |= failed;
                }
            }
            if let Some(grounding) = candidate.get("groundingMetadata") {
                let queries: Vec<String> = array(grounding.get("webSearchQueries"))
                    .map(plain)
                    .collect();
                let mut lines = Vec::new();
                if !queries.is_empty() {
                    lines.push(format!("searched for: {}", queries.join(", ")));
                }
                lines.extend(array(grounding.get("groundingChunks")).filter_map(|chunk| {
                    let web = chunk.get("web").or(chunk.get("retrievedContext"))?;
                    source(web.get("title"), web.get("uri"))
                }));
                let tool = if queries.is_empty() {
                    "grounding"
                } else {
                    "google_search"
                };
                found.push(HostedResult::text(tool, None, lines.join("\n"), grounding));
            }
            if let Some(context) = candidate.get("urlContextMetadata") {
                let lines: Vec<String> = array(context.get("urlMetadata"))
                    .map(|url| {
                        format!(
                            "{}: {}",
                            url.get("retrievedUrl").map(plain).unwrap_or_default(),
                            url.get("urlRetrievalStatus").map(plain).unwrap_or_default()
                        )
                    })
                    .collect();
                found.push(HostedResult::text(
                    "url_context",
                    None,
                    lines.join("\n"),
                    context,
                ));
            }
        }
        found
    }

    fn render(&self, results: &[CallResult], aliases: &Aliases) -> Value {
        let parts: Vec<Value> = results
            .iter()
            .map(|r| {
                let mut response = Map::new();
                if let Some(id) = &r.call.id {
                    response.insert("id".into(), json!(id));
                }
                response.insert("name".into(), json!(aliases.provider_name(&r.call.name)));
                let (described, parts) = placed("", r.attachments(), function_response_part);
                let body = match &r.result {
                    Ok(output) if !output.is_error => success(output, &described),
                    _ => json!({ "error": joined(r.text(), &described) }),
                };
                response.insert("response".into(), body);
                if !parts.is_empty() {
                    response.insert("parts".into(), Value::Array(parts));
                }
                json!({ "functionResponse": response })
            })
            .collect();
        json!({ "role": "user", "parts": parts })
    }
}

/// A successful result's `response`: its structured value as `output` (its text when it has
/// none), and beside a structured value, the text blocks as `text`, so neither is lost. The
/// attachments without a part (`described`) follow the text.
pub fn success(output: &ToolOutput, described: &str) -> Value {
    let Some(structured) = &output.structured else {
        return json!({ "output": joined(output.to_text(), described) });
    };
    let has_text = (output.content.iter()).any(|c| matches!(c, Content::Text { .. }));
    if has_text || !described.is_empty() {
        let text = if has_text {
            output.to_text()
        } else {
            String::new()
        };
        json!({ "output": structured, "text": joined(text, described) })
    } else {
        json!({ "output": structured })
    }
}

/// `text`, then `more` on a line of its own when there is any.
pub fn joined(mut text: String, more: &str) -> String {
    if !more.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(more);
    }
    text
}

/// A result's text and attachments for a `functionResponse`: the parts a model reads
/// ([`function_response_part`]; none before Gemini 3, `reads_parts` false), and the text with
/// the others told in words.
pub fn function_response_parts<'a>(
    text: &str,
    attachments: impl IntoIterator<Item = &'a Content>,
    reads_parts: bool,
) -> (String, Vec<Value>) {
    if reads_parts {
        placed(text, attachments, function_response_part)
    } else {
        placed(text, attachments, |_| None)
    }
}

/// An attachment as a part of a `functionResponse` (Gemini's multimodal function responses,
/// which Gemini 3 models read), where Gemini takes its type: an image, a PDF or a plain-text
/// file by its bytes, a PDF resource's blob, as `inlineData`. Files at a URL, audio and
/// resources otherwise have none (they are told in words).
pub fn function_response_part(attachment: &Content) -> Option<Value> {
    let inline = |mime_type: &str, data: &str| json!({ "inlineData": { "mimeType": essence(mime_type), "data": data } });
    let document = |mime_type: &str| is_one_of(mime_type, &["application/pdf", "text/plain"]);
    let image = |mime_type: &str| is_one_of(mime_type, &["image/png", "image/jpeg", "image/webp"]);
    match attachment {
        Content::Image { data, mime_type } if image(mime_type) => Some(inline(mime_type, data)),
        Content::File {
            source: FileSource::Base64 { data },
            mime_type,
            ..
        } if document(mime_type) => Some(inline(mime_type, data)),
        Content::Resource {
            mime_type: Some(mime_type),
            contents: ResourceContents::Blob(blob),
            ..
        } if document(mime_type) => Some(inline(mime_type, blob)),
        _ => None,
    }
}

const PROFILE: &str = "gemini";

/// Keywords Gemini's Schema object has.
const KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Keywords dropped without a word: they say nothing the model needs.
const SILENT: &[&str] = &[
    "$schema",
    "title",
    "$id",
    "$comment",
    "additionalProperties",
];

/// Whether a tool's `parameters`, as Gemini takes them, say nothing but "an object": no
/// properties and no branches.
fn takes_nothing(parameters: &Value) -> bool {
    let properties = parameters.get("properties").and_then(Value::as_object);
    properties.is_none_or(Map::is_empty) && parameters.get("anyOf").is_none()
}

/// The canonical schema as Gemini's `parameters` takes it.
pub fn gemini(schema: &Value) -> Result<Value, ProfileError> {
    super::profile::within_limits(PROFILE, schema)?;
    let mut out = super::refs::refs_to_root_definitions(schema)
        .map_err(|why| inexpressible("", &why))?
        .unwrap_or_else(|| schema.clone());
    let defs = match &mut out {
        Value::Object(root) => root.shift_remove("$defs").unwrap_or(Value::Null),
        _ => Value::Null,
    };
    transform(&mut out, "", &defs, &mut Vec::new(), 0)?;
    Ok(out)
}

fn inexpressible(at: &str, why: &str) -> ProfileError {
    ProfileError::Inexpressible {
        profile: PROFILE,
        at: at.to_owned(),
        why: why.to_owned(),
    }
}

/// How deep the schema may nest once its refs are inlined: Gemini takes no refs, so a chain of
/// them becomes nesting, which this walk (and the API) must stop somewhere.
const INLINED_DEPTH: usize = 128;

fn transform(
    node: &mut Value,
    at: &str,
    defs: &Value,
    stack: &mut Vec<String>,
    depth: usize,
) -> Result<(), ProfileError> {
    if depth >= INLINED_DEPTH {
        return Err(inexpressible(
            at,
            &format!("with its refs inlined, the schema nests {INLINED_DEPTH} or more levels deep"),
        ));
    }
    if let Value::Bool(true) = node {
        *node = json!({});
    }
    let Value::Object(map) = node else {
        return Err(inexpressible(
            at,
            "a schema that rejects everything cannot be expressed",
        ));
    };
    inline_ref(map, at, defs, stack, depth)?;
    simplify_combinators(map);
    null_unions_to_nullable(map);
    // A ref may come up from a branch merged into the map: `Option<Box<Node>>` is
    // `anyOf: [{"$ref"}, {"type": "null"}]`, whose ref is only seen once the null is taken out.
    inline_ref(map, at, defs, stack, depth)?;
    if let Some(value) = map.shift_remove("const") {
        match value {
            Value::String(_) => {
                map.insert("enum".into(), json!([value]));
            }
            other => note(map, &describe("const", &other)),
        }
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let non_null: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        if non_null.len() != values.len() {
            map.insert("nullable".into(), Value::Bool(true));
        }
        if non_null.iter().all(Value::is_string) {
            map.insert("enum".into(), Value::Array(non_null));
            map.entry("type").or_insert(json!("string"));
        } else {
            map.insert("enum".into(), Value::Array(non_null));
            move_to_description(map, "enum");
        }
    }
    match map.get("format").and_then(Value::as_str) {
        Some("enum" | "date-time") | None => {}
        Some(_) => move_to_description(map, "format"),
    }
    if map
        .get("additionalProperties")
        .is_some_and(Value::is_object)
    {
        // Dropped, the value's schema would be lost and the model could send values the
        // validator refuses; the tool is declared with its JSON Schema instead.
        return Err(inexpressible(
            at,
            "an object with arbitrary keys (a map) cannot be said in the OpenAPI subset",
        ));
    }
    for keyword in SILENT {
        map.shift_remove(*keyword);
    }
    let refused: Vec<String> = map
        .keys()
        .filter(|k| !KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    for keyword in refused {
        move_to_description(map, &keyword);
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, sub) in properties.iter_mut() {
            transform(
                sub,
                &pointer_push(&pointer_push(at, "properties"), name),
                defs,
                stack,
                depth + 1,
            )?;
        }
    }
    if let Some(items) = map.get_mut("items") {
        transform(items, &pointer_push(at, "items"), defs, stack, depth + 1)?;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for (i, sub) in branches.iter_mut().enumerate() {
            transform(sub, &format!("{at}/anyOf/{i}"), defs, stack, depth + 1)?;
        }
    }
    Ok(())
}

/// Inlines the map's `$ref`, if it has one, transformed; a recursive one is refused.
fn inline_ref(
    map: &mut Map<String, Value>,
    at: &str,
    defs: &Value,
    stack: &mut Vec<String>,
    depth: usize,
) -> Result<(), ProfileError> {
    let Some(Value::String(reference)) = map.shift_remove("$ref") else {
        return Ok(());
    };
    // Only a definition of the root's `$defs`, by its plain name: what the schema limits
    // measured is what is inlined.
    let name = match reference.strip_prefix("#/$defs/") {
        Some(name) if !name.contains(['/', '~', '%']) => name.to_owned(),
        _ => {
            return Err(inexpressible(
                at,
                &format!("`{reference}` is not a ref to a definition (`#/$defs/Name`)"),
            ))
        }
    };
    if stack.contains(&name) {
        return Err(inexpressible(
            at,
            &format!("`{name}` is recursive, which Gemini's schema cannot express"),
        ));
    }
    let Some(def) = defs.get(&name).cloned() else {
        return Err(inexpressible(
            at,
            &format!("`{reference}` does not resolve"),
        ));
    };
    let mut inlined = def;
    stack.push(name);
    transform(&mut inlined, at, defs, stack, depth + 1)?;
    stack.pop();
    if let Value::Object(def_map) = inlined {
        for (k, v) in def_map {
            map.entry(k).or_insert(v);
        }
    }
    Ok(())
}

/// `"type": [T, "null"]` and `anyOf: [.., {"type": "null"}]` become `nullable: true`.
fn null_unions_to_nullable(map: &mut Map<String, Value>) {
    let types = types_of(map);
    if map.get("type").is_some_and(Value::is_array) {
        let non_null: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
        if non_null.len() < types.len() {
            map.insert("nullable".into(), Value::Bool(true));
        }
        match non_null.as_slice() {
            [one] => {
                map.insert("type".into(), json!(one));
            }
            [] => {
                map.shift_remove("type");
            }
            many => {
                map.shift_remove("type");
                let branches: Vec<Value> = many.iter().map(|t| json!({ "type": t })).collect();
                map.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|b| b != &json!({ "type": "null" }));
        if branches.len() < before {
            map.insert("nullable".into(), Value::Bool(true));
            if let Some(Value::Array(branches)) = map.get("anyOf") {
                if branches.len() == 1 {
                    if let Some(Value::Array(mut branches)) = map.shift_remove("anyOf") {
                        if let Some(Value::Object(only)) = branches.pop() {
                            for (k, v) in only {
                                map.entry(k).or_insert(v);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Checks that a schema obeys Gemini's subset; returns every finding.
pub fn check_gemini(schema: &Value) -> Result<(), Vec<Finding>> {
    super::profile::findings_within_limits(schema)?;
    let mut findings = Vec::new();
    walk_with_pointer(schema, "", &mut |node, at| {
        let mut found = |problem| findings.push(Finding::new(at, problem));
        let Value::Object(map) = node else {
            found(Problem::BooleanSchema);
            return;
        };
        for keyword in map.keys() {
            if !KEPT.contains(&keyword.as_str()) {
                found(Problem::KeywordNotAllowed {
                    keyword: keyword.clone(),
                });
            }
        }
        match map.get("type") {
            None => {}
            Some(Value::String(t)) if t != "null" => {}
            Some(other) => found(Problem::TypeNotSingle {
                found: other.clone(),
            }),
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            if !values.iter().all(Value::is_string) {
                found(Problem::NonStringEnum);
            }
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            if !["enum", "date-time"].contains(&format) {
                found(Problem::FormatNotSupported {
                    format: format.to_owned(),
                });
            }
        }
    });
    verdict(findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Content, ToolCall};

    #[test]
    fn a_results_images_go_as_parts_of_its_function_response() {
        let output = ToolOutput::text("the radar").with_content(Content::Image {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        });
        let result = CallResult {
            call: ToolCall::new("g1", "radar", json!({})),
            result: Ok(output),
        };
        let rendered = Gemini.render(&[result], &Aliases::default());
        assert_eq!(
            rendered["parts"][0]["functionResponse"],
            json!({
                "id": "g1",
                "name": "radar",
                "response": { "output": "the radar" },
                "parts": [{ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } }]
            })
        );
    }

    fn spec(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: "A tool".into(),
            parameters,
            output_schema: None,
            metadata: Default::default(),
        }
    }

    #[test]
    fn a_tool_without_parameters_is_declared_without_them() {
        let none = spec(
            "now",
            json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        );
        let declared = crate::provider::declare(
            [&none],
            crate::provider::Format::Gemini,
            &Default::default(),
        );
        assert_eq!(
            declared.tools,
            json!([{ "functionDeclarations": [{ "name": "now", "description": "A tool" }] }])
        );
    }

    #[test]
    fn a_map_is_declared_with_its_json_schema_not_with_its_values_dropped() {
        let counts = spec(
            "tally",
            json!({ "type": "object", "properties": {
                "counts": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } }
            }, "required": ["counts"], "additionalProperties": false }),
        );
        let declared = crate::provider::declare(
            [&counts],
            crate::provider::Format::Gemini,
            &Default::default(),
        );
        let function = &declared.tools[0]["functionDeclarations"][0];
        assert_eq!(function["parametersJsonSchema"], counts.parameters);
        assert!(function.get("parameters").is_none());
        assert!(declared.notes[0].contains("a map"), "{:?}", declared.notes);
    }

    #[test]
    fn a_results_text_beside_its_structured_value_is_kept() {
        let output = ToolOutput::json(json!({ "temp": 21 })).with_content(crate::Content::Text {
            text: "Mild.".into(),
        });
        let result = CallResult {
            call: crate::ToolCall::new("c1", "weather", json!({})),
            result: Ok(output),
        };
        let rendered = Gemini.render(&[result], &Aliases::default());
        assert_eq!(
            rendered["parts"][0]["functionResponse"]["response"],
            json!({ "output": { "temp": 21 }, "text": "Mild." })
        );
        let plain = CallResult {
            call: crate::ToolCall::new("c2", "weather", json!({})),
            result: Ok(ToolOutput::json(json!(3))),
        };
        let rendered = Gemini.render(&[plain], &Aliases::default());
        assert_eq!(
            rendered["parts"][0]["functionResponse"]["response"],
            json!({ "output": 3 })
        );
    }

    #[test]
    fn null_unions_become_nullable_and_enums_strings_only() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "a": { "type": ["string", "null"], "format": "email" },
                "b": { "anyOf": [{ "type": "integer", "exclusiveMinimum": 0 }, { "type": "null" }] },
                "c": { "enum": [1, 2, 3] },
                "d": { "const": "fixed" },
                "e": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
                "f": { "type": ["string", "integer"] }
            },
            "required": ["a"],
            "additionalProperties": false
        });
        let g = gemini(&canonical).unwrap();
        assert!(g.get("additionalProperties").is_none());
        assert_eq!(
            g["properties"]["a"],
            json!({ "type": "string", "nullable": true, "description": "Format: email." })
        );
        assert_eq!(
            g["properties"]["b"],
            json!({ "nullable": true, "type": "integer", "description": "Greater than 0." })
        );
        assert_eq!(
            g["properties"]["c"],
            json!({ "description": "One of: 1, 2, 3." })
        );
        assert_eq!(
            g["properties"]["d"],
            json!({ "enum": ["fixed"], "type": "string" })
        );
        assert!(g["properties"]["e"].get("anyOf").is_some());
        assert_eq!(
            g["properties"]["f"]["anyOf"],
            json!([{ "type": "string" }, { "type": "integer" }])
        );
        check_gemini(&g).unwrap();
    }

    #[test]
    fn refs_are_inlined_and_recursion_is_refused() {
        let schema = json!({
            "type": "object",
            "properties": { "p": { "$ref": "#/$defs/P" } },
            "$defs": { "P": { "type": "object", "properties": { "x": { "type": "number" } } } }
        });
        let g = gemini(&schema).unwrap();
        assert_eq!(
            g["properties"]["p"]["properties"]["x"],
            json!({ "type": "number" })
        );
        let recursive = json!({
            "type": "object",
            "properties": { "n": { "$ref": "#/$defs/N" } },
            "$defs": { "N": { "type": "object", "properties": { "next": { "$ref": "#/$defs/N" } } } }
        });
        let err = gemini(&recursive).unwrap_err().to_string();
        assert!(err.contains("`N` is recursive"), "{err}");
        // Through an `Option<Box<N>>`: the ref is in a branch beside `null`, merged into the
        // property once the null is taken out.
        let optional = json!({
            "type": "object",
            "properties": { "n": { "$ref": "#/$defs/N" } },
            "required": ["n"],
            "$defs": { "N": { "type": "object", "properties": {
                "v": { "type": "integer" },
                "next": { "anyOf": [{ "$ref": "#/$defs/N" }, { "type": "null" }] }
            }, "required": ["v", "next"] } }
        });
        let err = gemini(&optional).unwrap_err().to_string();
        assert!(err.contains("`N` is recursive"), "{err}");
        // Not recursive, an optional ref is inlined, nullable.
        let once = json!({
            "type": "object",
            "properties": { "p": { "anyOf": [{ "$ref": "#/$defs/P" }, { "type": "null" }] } },
            "$defs": { "P": { "type": "object", "properties": { "x": { "type": "number" } } } }
        });
        let g = gemini(&once).unwrap();
        assert_eq!(
            g["properties"]["p"],
            json!({ "nullable": true, "type": "object", "properties": { "x": { "type": "number" } } })
        );
    }

    #[test]
    fn refs_resolve_where_they_point_and_a_long_chain_is_refused() {
        // A ref into a nested `$defs` names the same last segment as a root definition: it is
        // resolved to the nested one, never to the root's.
        let nested = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/L/$defs/d1" } },
            "$defs": { "d1": { "type": "string" }, "L": { "$defs": { "d1": { "type": "integer" } } } }
        });
        let g = gemini(&nested).unwrap();
        assert_eq!(g["properties"]["a"], json!({ "type": "integer" }));
        // 100 definitions in a chain: within the schema limits, too deep once inlined.
        let mut defs = serde_json::Map::new();
        for i in 0..100 {
            defs.insert(
                format!("d{i}"),
                json!({ "type": "object", "properties": { "next": { "$ref": format!("#/$defs/d{}", i + 1) } } }),
            );
        }
        defs.insert("d100".into(), json!({ "type": "string" }));
        let chain = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/d0" } }, "$defs": defs });
        let err = gemini(&chain).unwrap_err();
        assert!(err.to_string().contains("levels deep"), "{err}");
    }
}
