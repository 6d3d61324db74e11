//! The canonical schema of each demo tool, and its strict declarations.

use super::*;

#[test]
fn schema_has_required_properties_descriptions_and_no_extra_properties() {
    let exec = executor();
    assert_eq!(
        spec(&exec, "do_something").parameters,
        json!({
            "type": "object",
            "properties": { "arg": { "type": "string", "description": "this is an arg" } },
            "required": ["arg"],
            "additionalProperties": false
        })
    );
    let greet = &spec(&exec, "greet").parameters;
    assert_eq!(
        greet["required"],
        json!(["name"]),
        "default and Option parameters are optional"
    );
    assert_eq!(
        greet["properties"]["times"],
        json!({ "type": "integer", "minimum": 0, "maximum": 255, "default": 1 })
    );
    assert_eq!(
        greet["properties"]["title"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn complex_input_schema_is_inlined_and_carries_the_constraints() {
    let exec = executor();
    let schema = &spec(&exec, "check").parameters;
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert!(!text.contains("\"title\""), "{text}");
    let input = &schema["properties"]["input"];
    assert_eq!(input["properties"]["max_length_10"]["maxLength"], json!(10));
    assert_eq!(input["properties"]["min_length_5"]["minLength"], json!(5));
    assert_eq!(
        input["properties"]["kind"]["enum"],
        json!(["Room", "Bike", "Plane"])
    );
    assert_eq!(input["properties"]["categories"]["minItems"], json!(2));
    assert_eq!(input["properties"]["categories"]["maxItems"], json!(5));
    assert_eq!(
        input["properties"]["nullable_but_required"]["description"],
        json!("A nullable but required property.")
    );
    let required = input["required"].as_array().unwrap();
    assert!(
        required.contains(&json!("nullable_but_required")),
        "{required:?}"
    );
    assert_eq!(
        spec(&exec, "get_other").parameters["properties"]["id"],
        json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
    );
}

#[test]
fn flattened_parameter_is_the_whole_argument_object() {
    let exec = executor();
    let schema = &spec(&exec, "search").parameters;
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(
        schema["properties"]["query"]["description"],
        json!("What to look for.")
    );
    assert_eq!(schema["additionalProperties"], json!(false));
}

#[test]
fn every_tool_here_can_be_declared_strict_and_obeys_each_profile() {
    use ai_tool::profile;
    let exec = executor();
    for spec in exec.tools() {
        let openai = profile::openai_strict(&spec.parameters)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        profile::check_openai_strict(&openai).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
        let anthropic = profile::anthropic_strict(&spec.parameters)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        profile::check_anthropic_strict(&anthropic)
            .unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
        let gemini =
            profile::gemini(&spec.parameters).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        profile::check_gemini(&gemini).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
    }
    // The constraints strict mode cannot enforce are still told to the model.
    let strict = profile::openai_strict(&spec(&exec, "check").parameters).unwrap();
    let described = &strict["properties"]["input"]["properties"]["max_length_10"]["description"];
    assert_eq!(described, &json!("At most 10 characters."));
}

/// Strict mode narrows no demo tool: every one, maps and untyped values included, is declared
/// strict for OpenAI and Anthropic.
#[test]
fn every_demo_tool_is_declared_strict_for_openai_and_anthropic() {
    let exec = executor();
    let strict = DeclareOptions {
        strict: true,
        ..Default::default()
    };
    for format in [Format::OpenAiChat, Format::Anthropic] {
        let declared = exec.declarations(format, &strict);
        assert_eq!(
            declared.notes,
            Vec::<String>::new(),
            "{format}: {} tools",
            exec.tools().count()
        );
    }
}
