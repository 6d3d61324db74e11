//! Anthropic Messages: `tools` of `{name, description, input_schema}`, calls as `tool_use`
//! blocks of `content`, results as one user message of `tool_result` blocks. The tools you run
//! that Anthropic defines (computer, bash, text editor) are `tool_use` blocks like the rest; the
//! tools Anthropic runs are `server_tool_use` (or `mcp_tool_use`) blocks answered by
//! `<tool>_tool_result` blocks in the same response, read as hosted results.
//!
//! Strict tool use (`anthropic-strict`) takes only types, `enum`, `const`, `anyOf`, `allOf`,
//! local refs, `required`, `additionalProperties: false`, the supported string formats, and
//! `minItems` of 0 or 1. Everything else is moved into the description. It takes no recursive
//! schema: a tool whose schema refers to itself is declared non-strict.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{strict_or_not, DeclareOptions, Declared};
use super::encoding::{self, Encoding, Place};
use super::hosted::CODE_CALLER;
use super::hosted_results::{fields, plain, source, HostedResult};
use super::json::{array, object_arguments};
use super::profile::{
    branches_beside_properties, is_object_schema, move_to_description, verdict, walk_with_pointer,
    Finding, Problem, ProfileError,
};
use super::results::{essence, is_one_of, last_segment, placed, text_or_blocks, WEB_IMAGES};
use super::{Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, MODEL_API};
use crate::{Callers, Content, FileSource, ResourceContents, ToolSpec};

pub(crate) struct Anthropic;

impl Api for Anthropic {
    fn title(&self) -> &'static str {
        "Anthropic"
    }

    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn name_rule(&self) -> &'static NameRule {
        &MODEL_API
    }

    fn declare(&self, spec: &ToolSpec, name: &str, options: &DeclareOptions) -> Declared {
        let strictness = strict_or_not(spec, options.strict, anthropic_strict_encoded);
        let mut map = Map::new();
        map.insert("name".into(), json!(name));
        map.insert("description".into(), json!(spec.description));
        map.insert("input_schema".into(), strictness.schema);
        if strictness.strict {
            map.insert("strict".into(), json!(true));
        }
        if !spec.metadata.input_examples.is_empty() {
            map.insert("input_examples".into(), json!(spec.metadata.input_examples));
        }
        if spec.metadata.defer_loading {
            map.insert("defer_loading".into(), json!(true));
        }
        match spec.metadata.callers {
            Callers::Model => {}
            Callers::Code => {
                map.insert("allowed_callers".into(), json!([CODE_CALLER]));
            }
            Callers::ModelAndCode => {
                map.insert("allowed_callers".into(), json!(["direct", CODE_CALLER]));
            }
        }
        Declared {
            value: Value::Object(map),
            note: strictness.note,
            encoding: strictness.encoding,
        }
    }

    fn has_shape(&self, response: &Value) -> bool {
        response.get("content").is_some_and(Value::is_array)
    }

    fn signature(&self) -> &'static str {
        "`content` array"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        for block in array(response.get("content"))
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        {
            calls.push(
                block.get("id"),
                block.get("name"),
                object_arguments(block.get("input")),
            )?;
        }
        Ok(())
    }

    fn hosted_results(&self, response: &Value) -> Vec<HostedResult> {
        let mut found: Vec<HostedResult> = Vec::new();
        for block in array(response.get("content")) {
            let Some(kind) = block.get("type").and_then(Value::as_str) else {
                continue;
            };
            if matches!(kind, "server_tool_use" | "mcp_tool_use") {
                let name = block.get("name").map(plain).unwrap_or_default();
                let input = block.get("input").map(fields).unwrap_or_default();
                found.push(HostedResult::text(&name, block.get("id"), input, block));
            } else if let Some(tool) = kind
                .strip_suffix("_tool_result")
                .filter(|_| kind != "tool_result")
            {
                let id = block.get("tool_use_id");
                let (text, is_error) = server_result_text(block.get("content"));
                let call = found
                    .iter_mut()
                    .rev()
                    .find(|r| id.is_some() && r.id.as_deref() == id.and_then(Value::as_str));
                let result = match call {
                    // The use block, then each result block, in one flat array however many
                    // results name the same use.
                    Some(call) => {
                        match &mut call.raw {
                            Value::Array(blocks) => blocks.push(block.clone()),
                            raw => *raw = json!([raw.take(), block]),
                        }
                        call
                    }
                    None => {
                        found.push(HostedResult::text(tool, id, String::new(), block));
                        found.last_mut().expect("just pushed")
                    }
                };
                result.push_text(text);
                result.output.is_error |= is_error;
                result
                    .output
                    .content
                    .retain(|c| !matches!(c, Content::Text { text } if text.is_empty()));
            }
        }
        found
    }

    fn render(&self, results: &[CallResult], aliases: &Aliases) -> Value {
        let blocks: Vec<Value> = results
            .iter()
            .map(|r| {
                let mut block = Map::new();
                block.insert("type".into(), json!("tool_result"));
                block.insert("tool_use_id".into(), json!(r.id()));
                block.insert("content".into(), result_content(r, aliases));
                if r.is_error() {
                    block.insert("is_error".into(), json!(true));
                }
                Value::Object(block)
            })
            .collect();
        json!({ "role": "user", "content": blocks })
    }
}

/// The text of a server tool's result block's `content`, and whether it reports an error:
/// search results as `title — url` lines, code output as stdout, stderr and return code.
fn server_result_text(content: Option<&Value>) -> (String, bool) {
    let Some(content) = content else {
        return (String::new(), false);
    };
    if let Some(code) = content.get("error_code") {
        return (format!("error: {}", plain(code)), true);
    }
    if let Some(items) = content.as_array() {
        let lines: Vec<String> = items
            .iter()
            .map(|item| {
                source(item.get("title"), item.get("url"))
                    .or_else(|| item.get("text").map(plain))
                    .unwrap_or_else(|| plain(item))
            })
            .collect();
        return (lines.join("\n"), false);
    }
    if content.get("return_code").is_some() || content.get("stdout").is_some() {
        let mut lines = Vec::new();
        for stream in ["stdout", "stderr"] {
            if let Some(text) = content.get(stream).and_then(Value::as_str) {
                if !text.is_empty() {
                    lines.push(format!("{stream}: {}", text.trim_end()));
                }
            }
        }
        lines.extend(
            content
                .get("return_code")
                .map(|c| format!("return code: {c}")),
        );
        return (lines.join("\n"), false);
    }
    (fields(content), false)
}

/// A result's content: the tools it found as `tool_reference` blocks (a tool search's), else
/// its text and attachments.
fn result_content(r: &CallResult, aliases: &Aliases) -> Value {
    if r.tool_references().next().is_some() {
        return super::tool_search::anthropic_tool_references(r.tool_references(), aliases);
    }
    tool_result_content(&r.text(), r.attachments())
}

/// A `tool_result` block's `content`: the text alone, or with attachments, a text block then
/// `image` and `document` blocks ([`attachment_block`]); what has no block is told in words in
/// the text. A blank text is left out beside blocks, as Anthropic refuses a blank text block.
pub fn tool_result_content<'a>(
    text: &str,
    attachments: impl IntoIterator<Item = &'a Content>,
) -> Value {
    let (text, blocks) = placed(text, attachments, attachment_block);
    let text_block = |text: &str| json!({ "type": "text", "text": text });
    text_or_blocks(&text, blocks, text_block)
}

/// An attachment as a block of a `tool_result`, where Anthropic has one: an `image`; a PDF
/// (bytes or URL) or a plain-text file as a `document` titled with its name; a text resource,
/// or a PDF one, as a `document` titled with its URI. Audio and resource links have none.
pub fn attachment_block(attachment: &Content) -> Option<Value> {
    let document = |source: Value, title: &str| json!({ "type": "document", "source": source, "title": title });
    let pdf =
        |data: &str| json!({ "type": "base64", "media_type": "application/pdf", "data": data });
    let plain = |text: &str| json!({ "type": "text", "media_type": "text/plain", "data": text });
    match attachment {
        Content::Image { data, mime_type } if is_one_of(mime_type, WEB_IMAGES) => Some(json!({
            "type": "image",
            "source": { "type": "base64", "media_type": essence(mime_type), "data": data },
        })),
        Content::File {
            source,
            mime_type,
            name,
        } => {
            let title = match (name, source) {
                (Some(name), _) => name.as_str(),
                (None, FileSource::Url { url }) => last_segment(url),
                (None, FileSource::Base64 { .. }) => "file",
            };
            match (essence(mime_type).as_str(), source) {
                ("application/pdf", FileSource::Base64 { data }) => {
                    Some(document(pdf(data), title))
                }
                ("application/pdf", FileSource::Url { url }) => {
                    Some(document(json!({ "type": "url", "url": url }), title))
                }
                ("text/plain", FileSource::Base64 { data }) => {
                    let text = crate::output::text_of_base64(mime_type, data)?;
                    Some(document(plain(&text), title))
                }
                _ => None,
            }
        }
        Content::Resource {
            uri,
            mime_type,
            contents,
        } => match contents {
            ResourceContents::Text(text) => Some(document(plain(text), uri)),
            ResourceContents::Blob(blob) => {
                let pdf_type = mime_type.as_deref().map(essence);
                (pdf_type.as_deref() == Some("application/pdf")).then(|| document(pdf(blob), uri))
            }
        },
        Content::Image { .. }
        | Content::Audio { .. }
        | Content::ResourceLink { .. }
        | Content::Text { .. }
        | Content::ToolReference { .. } => None,
    }
}

const PROFILE: &str = "anthropic-strict";

/// Keywords that stay in the schema.
const KEPT: &[&str] = &[
    "type",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "required",
    "additionalProperties",
    "properties",
    "items",
    "description",
    "format",
    "minItems",
];

/// String formats Anthropic's strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The canonical schema as Anthropic's strict tool use takes it.
pub fn anthropic_strict(schema: &Value) -> Result<Value, ProfileError> {
    anthropic_strict_encoded(schema).map(|(schema, _)| schema)
}

/// The canonical schema as Anthropic's strict tool use takes it, and how it encodes the
/// arguments (maps as `{"key", "value"}` pairs, untyped values as JSON text): decode the model's
/// arguments with it. `declare` does this for you, through `Declarations::aliases`.
pub fn anthropic_strict_encoded(schema: &Value) -> Result<(Value, Encoding), ProfileError> {
    super::profile::within_limits(PROFILE, schema)?;
    let mut out = super::refs::refs_to_root_definitions(schema)
        .map_err(|why| inexpressible("", &why))?
        .unwrap_or_else(|| schema.clone());
    if let Some((at, reference)) = super::refs::recursive_ref(&out) {
        return Err(inexpressible(
            &at,
            &format!(
                "`$ref` to `{reference}` makes the schema recursive, which strict tool use does not support"
            ),
        ));
    }
    if let Value::Object(root) = &out {
        if encoding::map_place(root).is_some() {
            return Err(inexpressible(
                "",
                "the root must be an object with properties, not a map",
            ));
        }
    }
    let mut defs = BTreeMap::new();
    let root = transform(&mut out, "", &mut defs)?;
    single_types(&mut out);
    Ok((out, Encoding::new(root, defs)))
}

/// Every `type` of several names (`["string", "null"]`, the untyped value's four) written as
/// an `anyOf` of one branch per type, each with the keywords of its type; and no `type`
/// beside an `enum` or `const`, which fix the values. Anthropic's SDK (`transform_schema`)
/// takes only one type name per schema: with these forms it gives our strict schemas back
/// unchanged. The values a schema admits are the same.
fn single_types(node: &mut Value) {
    match node {
        Value::Object(map) => {
            for value in map.values_mut() {
                single_types(value);
            }
            let primitive = |v: &Value| !v.is_array() && !v.is_object();
            let literals = match (map.get("enum"), map.get("const")) {
                (Some(Value::Array(values)), _) => {
                    !values.is_empty() && values.iter().all(primitive)
                }
                (_, Some(value)) => primitive(value),
                _ => false,
            };
            if literals {
                map.shift_remove("type");
                return;
            }
            let Some(Value::Array(types)) = map.get("type") else {
                return;
            };
            let types: Vec<Value> = types.clone();
            map.shift_remove("type");
            if let [only] = types.as_slice() {
                map.insert("type".into(), only.clone());
                return;
            }
            let branches: Vec<Value> = types
                .iter()
                .map(|t| {
                    let mut branch = Map::new();
                    branch.insert("type".into(), t.clone());
                    for keyword in keywords_of(t.as_str().unwrap_or_default()) {
                        if let Some(value) = map.shift_remove(*keyword) {
                            branch.insert((*keyword).into(), value);
                        }
                    }
                    Value::Object(branch)
                })
                .collect();
            // Keywords of a type not among the names have nothing to apply to.
            for t in ["object", "array", "string"] {
                for keyword in keywords_of(t) {
                    map.shift_remove(*keyword);
                }
            }
            match map.shift_remove("anyOf") {
                Some(existing) => {
                    let both = json!([{ "anyOf": branches }, { "anyOf": existing }]);
                    map.insert("allOf".into(), both);
                }
                None => {
                    map.insert("anyOf".into(), Value::Array(branches));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(single_types),
        _ => {}
    }
}

/// The keywords the profile keeps that apply to values of one type.
fn keywords_of(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "object" => &["properties", "required", "additionalProperties"],
        "array" => &["items", "minItems"],
        "string" => &["format"],
        _ => &[],
    }
}

fn inexpressible(at: &str, why: &str) -> ProfileError {
    ProfileError::Inexpressible {
        profile: PROFILE,
        at: at.to_owned(),
        why: why.to_owned(),
    }
}

fn transform(
    node: &mut Value,
    at: &str,
    defs: &mut BTreeMap<String, Place>,
) -> Result<Place, ProfileError> {
    if *node == Value::Bool(true) {
        *node = json!({});
    }
    let Value::Object(map) = node else {
        return Err(inexpressible(
            at,
            "a schema that is `false` accepts nothing",
        ));
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        // Strict mode follows JSON pointers into the schema only (`#/$defs/...`): not `#`,
        // anchors, or text after `#` that is not a pointer (found by the catalog_line fuzz
        // target: `#$/defs/Node`).
        if !reference.starts_with("#/") {
            return Err(inexpressible(
                at,
                &format!("`$ref` to `{reference}` is not a JSON pointer into the schema (`#/...`)"),
            ));
        }
    }
    if let Some(one_of) = map.shift_remove("oneOf") {
        map.insert("anyOf".into(), one_of);
    }
    let refused: Vec<String> = map
        .keys()
        .filter(|k| !KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    for keyword in refused {
        move_to_description(map, &keyword);
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !FORMATS.contains(&f))
    {
        move_to_description(map, "format");
    }
    if map
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
    {
        move_to_description(map, "minItems");
    }
    if encoding::is_untyped(map) {
        return encoding::write_any_keeping_definitions(map, at, defs, transform);
    }
    // The SDK's `transform_schema` refuses a schema without one of these.
    if !["type", "anyOf", "allOf", "$ref", "enum", "const"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        return Err(inexpressible(
            at,
            "strict mode needs a `type` for every value",
        ));
    }
    if let Some(nullable) = encoding::map_place(map) {
        if let Some(keyword) = encoding::keyword_beside_map(map) {
            return Err(inexpressible(
                at,
                &format!("a map with `{keyword}` beside it cannot be written as key/value pairs"),
            ));
        }
        // Definitions kept beside the map are rewritten as anywhere else.
        encoding::transform_definitions(map, at, defs, transform)?;
        return encoding::write_pairs(map, nullable, at, &mut |values, here| {
            transform(values, here, defs)
        });
    }
    let is_object = is_object_schema(map);
    if let Some(keyword) = branches_beside_properties(map) {
        return Err(inexpressible(
            at,
            &format!("an object with `{keyword}` beside its properties cannot be closed"),
        ));
    }
    if is_object {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            Some(_) => {
                return Err(inexpressible(
                    at,
                    "objects with both properties and arbitrary other keys are not supported",
                ))
            }
        }
        let names: Vec<String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map_or(Vec::new(), |p| p.keys().cloned().collect());
        if let Some(Value::Array(required)) = map.get("required") {
            if let Some(stray) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|r| !names.iter().any(|n| n == r))
            {
                return Err(inexpressible(
                    at,
                    &format!("`required` names `{stray}`, which is not a property"),
                ));
            }
        }
    }
    encoding::transform_subschemas(map, at, defs, &["anyOf", "allOf"], transform)
}

/// Checks that a schema obeys Anthropic strict mode's rules; returns every finding.
pub fn check_anthropic_strict(schema: &Value) -> Result<(), Vec<Finding>> {
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
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            if !FORMATS.contains(&format) {
                found(Problem::FormatNotSupported {
                    format: format.to_owned(),
                });
            }
        }
        if map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1)
        {
            found(Problem::MinItemsOverOne);
        }
        if let Some(Value::String(r)) = map.get("$ref") {
            if !r.starts_with("#/") {
                found(Problem::NonLocalRef);
            }
        }
        // The SDK's `transform_schema` refuses a schema without one of these.
        if !["type", "anyOf", "allOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            found(Problem::NoType);
        }
        let is_object = is_object_schema(map);
        if is_object && map.get("additionalProperties") != Some(&Value::Bool(false)) {
            found(Problem::OpenObject);
        }
        // The SDK's `transform_schema` takes one type name, not a list.
        if let Some(found_type @ Value::Array(_)) = map.get("type") {
            found(Problem::TypeNotSingle {
                found: found_type.clone(),
            });
        }
    });
    if let Some((at, reference)) = super::refs::recursive_ref(schema) {
        findings.push(Finding::new(&at, Problem::Recursive { reference }));
    }
    verdict(findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_structure_and_moves_bounds_into_the_description() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "maxLength": 10, "format": "email" },
                "tags": { "type": "array", "items": { "type": "string", "pattern": "^[a-z]+$" }, "minItems": 2, "maxItems": 5 },
                "when": { "type": ["string", "null"], "format": "date-time" },
                "n": { "type": "integer", "minimum": 0, "maximum": 255 }
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let strict = anthropic_strict(&canonical).unwrap();
        assert_eq!(
            strict["required"],
            json!(["name"]),
            "optional properties stay optional"
        );
        assert_eq!(
            strict["properties"]["name"],
            json!({ "type": "string", "format": "email", "description": "At most 10 characters." })
        );
        assert_eq!(
            strict["properties"]["tags"]["description"],
            json!("At most 5 items. At least 2 items.")
        );
        assert_eq!(
            strict["properties"]["tags"]["items"]["description"],
            json!("Must match the regular expression \"^[a-z]+$\".")
        );
        assert_eq!(
            strict["properties"]["n"]["description"],
            json!("At least 0. At most 255.")
        );
        check_anthropic_strict(&strict).unwrap();
    }

    #[test]
    fn several_type_names_become_an_any_of_with_each_types_keywords() {
        let schema = json!({
            "type": "object",
            "properties": {
                "when": {
                    "type": ["object", "null"],
                    "description": "When, if known",
                    "properties": { "day": { "type": ["string", "null"], "format": "date" } },
                    "required": ["day"]
                },
                "anything": {},
                "unit": { "type": ["string", "null"], "enum": ["c", "f", null] }
            },
            "required": ["when"]
        });
        let strict = anthropic_strict(&schema).unwrap();
        check_anthropic_strict(&strict).unwrap();
        let when = &strict["properties"]["when"];
        assert_eq!(when["description"], "When, if known");
        assert_eq!(when["anyOf"][1], json!({ "type": "null" }));
        let object = &when["anyOf"][0];
        assert_eq!(object["type"], "object");
        assert_eq!(object["additionalProperties"], false);
        assert_eq!(
            object["properties"]["day"]["anyOf"],
            json!([{ "type": "string", "format": "date" }, { "type": "null" }])
        );
        let types: Vec<&Value> = strict["properties"]["anything"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|branch| &branch["type"])
            .collect();
        assert_eq!(
            types,
            [
                &json!("string"),
                &json!("number"),
                &json!("boolean"),
                &json!("null")
            ]
        );
        assert_eq!(strict["properties"]["unit"].get("type"), None);
        // A list of type names is what the SDK cannot read: the checker says so.
        let listed = json!({ "type": "object", "properties": { "a": { "type": ["string", "null"] } }, "required": ["a"], "additionalProperties": false });
        assert!(check_anthropic_strict(&listed).is_err());
    }

    #[test]
    fn a_ref_that_is_not_a_pointer_into_the_schema_is_inexpressible() {
        // The catalog_line fuzz target's first find: `#$/defs/Node` was kept, and the checker
        // refused the profile's own output.
        let schema = json!({
            "type": "object",
            "properties": { "root": {} },
            "$defs": { "Node": { "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#$/defs/Node" } } } } }
        });
        let err = anthropic_strict(&schema).unwrap_err();
        assert!(err.to_string().contains("does not resolve"), "{err}");
        // An anchor that does resolve is still not a pointer the profile can keep.
        let anchored = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#N" } },
            "$defs": { "Node": { "$anchor": "N", "type": "string" } }
        });
        let err = anthropic_strict(&anchored).unwrap_err();
        assert!(
            err.to_string()
                .contains("is not a JSON pointer into the schema"),
            "{err}"
        );
        for reference in ["#", "#anchor"] {
            let schema = json!({ "type": "object", "properties": { "a": { "$ref": reference } } });
            assert!(anthropic_strict(&schema).is_err(), "{reference}");
        }
    }

    #[test]
    fn many_results_for_one_server_tool_use_stay_one_flat_array() {
        let mut content = vec![
            json!({ "type": "server_tool_use", "id": "x", "name": "web_search", "input": {} }),
        ];
        content.extend((0..20_000).map(
            |_| json!({ "type": "web_search_tool_result", "tool_use_id": "x", "content": [] }),
        ));
        let response = json!({ "content": content });
        let found = Anthropic.hosted_results(&response);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].raw.as_array().map(Vec::len), Some(20_001));
    }

    #[test]
    fn a_map_with_a_combinator_beside_it_is_inexpressible_not_half_encoded() {
        // The catalog_line campaign's find: the pairs kept the `anyOf`, whose branch kept a
        // `multipleOf` the checker refuses.
        let schema = json!({
            "type": "object",
            "properties": { "labels": { "type": "object", "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "number", "multipleOf": 0.5 } }
            ] } }
        });
        for result in [
            anthropic_strict(&schema),
            crate::provider::openai_strict::openai_strict(&schema),
        ] {
            let err = result.unwrap_err();
            assert!(err.to_string().contains("`anyOf` beside it"), "{err}");
        }
    }

    #[test]
    fn definitions_beside_a_map_are_rewritten_too() {
        // The catalog_line campaign's find: a map written as pairs kept its own `$defs` as
        // written, with a definition that has no type, which strict mode refuses.
        let schema = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": {
                "type": "object",
                "$defs": { "kids": { "tyqe": "array", "items": { "$ref": "#/$defs/Node" } } },
                "required": ["labal"]
            } }
        });
        let openai = crate::provider::openai_strict::openai_strict(&schema);
        let err = openai.unwrap_err().to_string();
        assert!(err.contains("/$defs/Node/$defs/kids"), "{err}");
        let typed = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": {
                "type": "object",
                "$defs": { "kids": { "type": "array", "items": { "$ref": "#/$defs/Node" } } }
            } }
        });
        for (profile, result) in [
            ("anthropic", anthropic_strict(&typed)),
            (
                "openai",
                crate::provider::openai_strict::openai_strict(&typed),
            ),
        ] {
            let out = result.unwrap_or_else(|e| panic!("{profile}: {e}"));
            let kids = &out["$defs"]["Node"]["$defs"]["kids"];
            assert_eq!(kids["type"], "array", "{profile}: {out}");
        }
        let strict = crate::provider::openai_strict::openai_strict(&typed).unwrap();
        assert!(crate::provider::openai_strict::check_openai_strict(&strict).is_ok());
        assert!(check_anthropic_strict(&anthropic_strict(&typed).unwrap()).is_ok());

        // An untyped schema that holds definitions keeps them, for the `$ref`s into them.
        let untyped = json!({
            "type": "object",
            "properties": {
                "any": { "description": "anything", "$defs": { "d": { "type": "string" } } },
                "named": { "$ref": "#/properties/any/$defs/d" }
            },
            "required": ["any", "named"]
        });
        for (profile, result) in [
            ("anthropic", anthropic_strict(&untyped)),
            (
                "openai",
                crate::provider::openai_strict::openai_strict(&untyped),
            ),
        ] {
            let out = result.unwrap_or_else(|e| panic!("{profile}: {e}"));
            let kept = &out["properties"]["any"]["$defs"]["d"]["type"];
            assert_eq!(kept, "string", "{profile}: {out}");
        }
    }
}
