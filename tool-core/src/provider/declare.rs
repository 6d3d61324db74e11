//! Declaring tools, the part every API shares: options, aliases and the strict-or-not choice;
//! each API's module writes its own declaration.

use serde_json::Value;

use super::encoding::Encoding;
use super::profile::ProfileError;
use super::{api, Aliases, Format};
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
    /// Write a tool's example arguments ([`ToolMetadata::input_examples`]) at the end of its
    /// description for the APIs that have no field for them (all but Anthropic, which is sent
    /// them as `input_examples` either way), after a line saying what they are.
    ///
    /// [`ToolMetadata::input_examples`]: crate::ToolMetadata::input_examples
    pub examples_in_description: bool,
}

/// The line before the example arguments written into a description
/// ([`DeclareOptions::examples_in_description`]).
pub const EXAMPLES_HEADING: &str = "Example arguments:";

/// The spec with its example arguments at the end of its description, when asked and the API
/// has no field for them.
fn with_examples<'a>(
    spec: &'a ToolSpec,
    format: Format,
    options: &DeclareOptions,
) -> std::borrow::Cow<'a, ToolSpec> {
    let examples = &spec.metadata.input_examples;
    if !options.examples_in_description || examples.is_empty() || format == Format::Anthropic {
        return std::borrow::Cow::Borrowed(spec);
    }
    let mut spec = spec.clone();
    let lines: Vec<String> = examples.iter().map(Value::to_string).collect();
    let description = spec.description.trim_end();
    let gap = if description.is_empty() { "" } else { "\n\n" };
    spec.description = format!("{description}{gap}{EXAMPLES_HEADING}\n{}", lines.join("\n"));
    std::borrow::Cow::Owned(spec)
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
            let name = spec.name.as_str();
            let spec = with_examples(spec, format, options);
            let declared = api(format).declare(&spec, aliases.provider_name(name), options);
            notes.extend(declared.note);
            encodings.push((name, declared.encoding));
            declared.value
        })
        .collect();
    for (name, encoding) in encodings {
        aliases.set_encoding(name, encoding);
    }
    if matches!(format, Format::OpenAiChat | Format::OpenAiResponses) {
        for spec in specs.iter().filter(|s| s.metadata.text_input.is_some()) {
            aliases.set_takes_text(&spec.name);
        }
    }
    let declared = if format == Format::OpenAiResponses {
        in_namespaces(&specs, declared, &mut aliases)
    } else {
        declared
    };
    let tools = api(format).tools(declared);
    Declarations {
        tools,
        aliases,
        notes,
    }
}

/// OpenAI Responses' declarations with the tools of a namespace in one `namespace` object,
/// where its first tool is (its description the first tool's), the others in place.
fn in_namespaces(specs: &[&ToolSpec], declared: Vec<Value>, aliases: &mut Aliases) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(declared.len());
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (spec, value) in specs.iter().zip(declared) {
        let Some(namespace) = &spec.metadata.namespace else {
            out.push(value);
            continue;
        };
        aliases.set_namespace(&spec.name, &namespace.name);
        match at.get(namespace.name.as_str()) {
            Some(&i) => {
                if let Some(Value::Array(tools)) = out[i].get_mut("tools") {
                    tools.push(value);
                }
            }
            None => {
                at.insert(&namespace.name, out.len());
                out.push(serde_json::json!({
                    "type": "namespace",
                    "name": namespace.name,
                    "description": namespace.description,
                    "tools": [value],
                }));
            }
        }
    }
    out
}

/// One tool's declaration under `name`, and a note when it could not be declared as asked.
///
/// A strict declaration may encode the arguments (maps as pairs, untyped values as JSON text):
/// use [`declare`], whose `aliases` decode the calls, or
/// [`openai_strict_encoded`](crate::profile::openai_strict_encoded).
pub fn declaration(
    spec: &ToolSpec,
    name: &str,
    format: Format,
    options: &DeclareOptions,
) -> (Value, Option<String>) {
    let spec = with_examples(spec, format, options);
    let declared = api(format).declare(&spec, name, options);
    (declared.value, declared.note)
}

/// One tool's declaration, as an API's module makes it.
pub(crate) struct Declared {
    /// The declaration.
    pub value: Value,
    /// Why it is not as asked, if it is not.
    pub note: Option<String>,
    /// How its schema encodes the arguments.
    pub encoding: Encoding,
}

impl Declared {
    /// A declaration as asked, whose schema takes the arguments as they are.
    pub fn plain(value: Value) -> Self {
        Declared {
            value,
            note: None,
            encoding: Encoding::default(),
        }
    }
}

/// A strict profile: the canonical schema as the API's strict mode takes it, and how that
/// encodes the arguments.
pub(crate) type StrictProfile = fn(&Value) -> Result<(Value, Encoding), ProfileError>;

/// The schema in the strict profile when asked and possible; otherwise the canonical one. Also
/// says whether it is strict, and why not when strict was asked.
pub(crate) struct Strictness {
    /// The schema to declare.
    pub schema: Value,
    /// Whether it is in the strict profile.
    pub strict: bool,
    /// Why it is not strict, when strict was asked.
    pub note: Option<String>,
    /// How it encodes the arguments.
    pub encoding: Encoding,
}

/// The schema in the strict profile when asked (by the tool's own `strict`, else by the
/// options) and possible; otherwise the canonical one.
pub(crate) fn strict_or_not(spec: &ToolSpec, strict: bool, transform: StrictProfile) -> Strictness {
    let strict = spec.metadata.strict.unwrap_or(strict);
    let canonical = |note| Strictness {
        schema: spec.parameters.clone(),
        strict: false,
        note,
        encoding: Encoding::default(),
    };
    if !strict {
        return canonical(None);
    }
    match transform(&spec.parameters) {
        Ok((schema, encoding)) => Strictness {
            schema,
            strict: true,
            note: None,
            encoding,
        },
        Err(e) => {
            let note = format!("`{}` is declared non-strict: {e}", spec.name);
            tracing::warn!(tool = %spec.name, "{note}");
            canonical(Some(note))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        let mut spec = ToolSpec {
            name: "get_weather".into(),
            description: "The weather in a city.".into(),
            parameters: json!({ "type": "object", "properties": { "city": { "type": "string" } } }),
            output_schema: Some(
                json!({ "type": "object", "properties": { "celsius": { "type": "integer" } } }),
            ),
            metadata: Default::default(),
        };
        spec.metadata.input_examples = vec![json!({ "city": "Paris" }), json!({ "city": "Oslo" })];
        spec
    }

    #[test]
    fn example_arguments_go_into_the_description_only_where_asked_and_no_field_holds_them() {
        let asked = DeclareOptions {
            examples_in_description: true,
            ..DeclareOptions::default()
        };
        let (chat, _) = declaration(&spec(), "get_weather", Format::OpenAiChat, &asked);
        assert_eq!(
            chat["function"]["description"],
            "The weather in a city.\n\nExample arguments:\n{\"city\":\"Paris\"}\n{\"city\":\"Oslo\"}"
        );
        let declared = declare([&spec()], Format::Gemini, &asked);
        let gemini = &declared.tools[0]["functionDeclarations"][0]["description"];
        assert!(gemini.as_str().unwrap().ends_with("{\"city\":\"Oslo\"}"));
        // Anthropic has a field for them, and gets them there alone.
        let (anthropic, _) = declaration(&spec(), "get_weather", Format::Anthropic, &asked);
        assert_eq!(anthropic["description"], "The weather in a city.");
        assert_eq!(anthropic["input_examples"][1], json!({ "city": "Oslo" }));
        // Not asked: the description as written.
        let (plain, _) = declaration(
            &spec(),
            "get_weather",
            Format::OpenAiChat,
            &DeclareOptions::default(),
        );
        assert_eq!(plain["function"]["description"], "The weather in a city.");
    }

    #[test]
    fn openai_responses_declares_the_output_schema() {
        let options = DeclareOptions::default();
        let (responses, _) = declaration(&spec(), "get_weather", Format::OpenAiResponses, &options);
        assert_eq!(responses["output_schema"], spec().output_schema.unwrap());
        let (chat, _) = declaration(&spec(), "get_weather", Format::OpenAiChat, &options);
        assert!(chat.to_string().find("celsius").is_none(), "{chat}");
    }
}
