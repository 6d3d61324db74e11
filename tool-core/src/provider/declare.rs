use serde_json::{json, Map, Value};

use super::{Aliases, Format};
use crate::profile::{self, Encoding};
use crate::ToolSpec;

/// How to declare tools.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeclareOptions {
    /// Ask for strict mode where the API has one (OpenAI, Anthropic). A tool whose schema
    /// cannot be put into the strict profile is declared non-strict, with a note saying why.
    pub strict: bool,
    /// For Gemini: send the full JSON Schema as `parametersJsonSchema` instead of `parameters`
    /// in Gemini's OpenAPI subset.
    pub gemini_json_schema: bool,
}

/// The tools of one request, in one API's format.
#[derive(Debug, Clone)]
pub struct Declarations {
    /// The value of the request's tools field (`tools`, or `toolConfig.tools` for Bedrock).
    pub tools: Value,
    /// The names tools were declared under, and how strict schemas encode arguments, to map
    /// calls back.
    pub aliases: Aliases,
    /// What was not as asked: tools declared non-strict, and why.
    pub notes: Vec<String>,
}

/// Declares tools for one API.
pub fn declare<'a>(
    specs: impl IntoIterator<Item = &'a ToolSpec>,
    format: Format,
    options: &DeclareOptions,
) -> Declarations {
    let specs: Vec<&ToolSpec> = specs.into_iter().collect();
    let mut aliases = Aliases::for_names(specs.iter().map(|s| s.name.as_str()), format);
    let mut notes = Vec::new();
    let mut encodings = Vec::new();
    let declared: Vec<Value> = specs
        .iter()
        .map(|spec| {
            let (value, note, encoding) =
                declare_one(spec, aliases.provider_name(&spec.name), format, options);
            notes.extend(note);
            encodings.push((spec.name.as_str(), encoding));
            value
        })
        .collect();
    for (name, encoding) in encodings {
        aliases.set_encoding(name, encoding);
    }
    let tools = match format {
        Format::Gemini => json!([{ "functionDeclarations": declared }]),
        _ => Value::Array(declared),
    };
    Declarations {
        tools,
        aliases,
        notes,
    }
}

/// One tool's declaration under `name`, and a note when it could not be declared as asked.
///
/// A strict declaration may encode the arguments (maps as pairs, untyped values as JSON text):
/// use [`declare`], whose `aliases` decode the calls, or `profile::openai_strict_encoded`.
pub fn declaration(
    spec: &ToolSpec,
    name: &str,
    format: Format,
    options: &DeclareOptions,
) -> (Value, Option<String>) {
    let (value, note, _) = declare_one(spec, name, format, options);
    (value, note)
}

fn declare_one(
    spec: &ToolSpec,
    name: &str,
    format: Format,
    options: &DeclareOptions,
) -> (Value, Option<String>, Encoding) {
    let description = spec.description.as_str();
    let mut encoding = Encoding::default();
    let (value, note) = match format {
        Format::OpenAiChat | Format::OpenAiResponses => {
            let (parameters, strict, note) = strict_or_not(
                spec,
                options.strict,
                profile::openai_strict_encoded,
                &mut encoding,
            );
            let function = json!({ "name": name, "description": description, "parameters": parameters, "strict": strict });
            let value = match format {
                Format::OpenAiChat => json!({ "type": "function", "function": function }),
                _ => {
                    let mut map = Map::new();
                    map.insert("type".into(), json!("function"));
                    map.extend(function.as_object().cloned().unwrap_or_default());
                    Value::Object(map)
                }
            };
            (value, note)
        }
        Format::Anthropic => {
            let (schema, strict, note) = strict_or_not(
                spec,
                options.strict,
                profile::anthropic_strict_encoded,
                &mut encoding,
            );
            let mut map = Map::new();
            map.insert("name".into(), json!(name));
            map.insert("description".into(), json!(description));
            map.insert("input_schema".into(), schema);
            if strict {
                map.insert("strict".into(), json!(true));
            }
            if !spec.metadata.input_examples.is_empty() {
                map.insert("input_examples".into(), json!(spec.metadata.input_examples));
            }
            (Value::Object(map), note)
        }
        Format::Gemini => {
            if options.gemini_json_schema {
                return (
                    json!({ "name": name, "description": description, "parametersJsonSchema": spec.parameters }),
                    None,
                    encoding,
                );
            }
            match profile::gemini(&spec.parameters) {
                Ok(parameters) => (
                    json!({ "name": name, "description": description, "parameters": parameters }),
                    None,
                ),
                Err(e) => {
                    let note = format!(
                        "`{}` is declared with `parametersJsonSchema`: {e}",
                        spec.name
                    );
                    tracing::warn!(tool = %spec.name, "{note}");
                    (
                        json!({ "name": name, "description": description, "parametersJsonSchema": spec.parameters }),
                        Some(note),
                    )
                }
            }
        }
        Format::Bedrock => (
            json!({ "toolSpec": { "name": name, "description": description, "inputSchema": { "json": spec.parameters } } }),
            None,
        ),
        Format::Mcp => (mcp_tool(spec, name), None),
    };
    (value, note, encoding)
}

/// The schema in the strict profile when asked and possible; otherwise the canonical one.
fn strict_or_not(
    spec: &ToolSpec,
    strict: bool,
    transform: fn(&Value) -> Result<(Value, Encoding), profile::ProfileError>,
    encoding: &mut Encoding,
) -> (Value, bool, Option<String>) {
    if !strict {
        return (spec.parameters.clone(), false, None);
    }
    match transform(&spec.parameters) {
        Ok((schema, encoded)) => {
            *encoding = encoded;
            (schema, true, None)
        }
        Err(e) => {
            let note = format!("`{}` is declared non-strict: {e}", spec.name);
            tracing::warn!(tool = %spec.name, "{note}");
            (spec.parameters.clone(), false, Some(note))
        }
    }
}

fn mcp_tool(spec: &ToolSpec, name: &str) -> Value {
    let mut map = Map::new();
    map.insert("name".into(), json!(name));
    if let Some(title) = &spec.metadata.title {
        map.insert("title".into(), json!(title));
    }
    map.insert("description".into(), json!(spec.description));
    map.insert("inputSchema".into(), spec.parameters.clone());
    if let Some(output) = &spec.output_schema {
        map.insert("outputSchema".into(), output.clone());
    }
    let hints = &spec.metadata.hints;
    let mut annotations = Map::new();
    if let Some(title) = &spec.metadata.title {
        annotations.insert("title".into(), json!(title));
    }
    for (key, value) in [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ] {
        if let Some(value) = value {
            annotations.insert(key.into(), json!(value));
        }
    }
    map.insert("annotations".into(), Value::Object(annotations));
    Value::Object(map)
}
