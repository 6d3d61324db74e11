//! Output schemas: a tool whose value is `JsonSchema` gets the schema of its structured result in
//! its spec, found by the macro from the return type alone; text, empty output, `ToolOutput`,
//! `Value`, a type without `JsonSchema` and a converted value get none. The result a tool returns
//! matches the schema it declares.

mod common;

use ai_tool::prelude::*;
use ai_tool::provider::{declaration, DeclareOptions};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use common::tools::serving;

#[derive(Serialize, JsonSchema)]
pub struct Weather {
    /// Degrees Celsius.
    celsius: i8,
    sky: Sky,
    wind: Option<Wind>,
}

#[derive(Serialize, JsonSchema)]
pub enum Sky {
    Clear,
    Cloudy,
}

#[derive(Serialize, JsonSchema)]
pub struct Wind {
    knots: u16,
}

/// `Serialize` only: no schema to give.
#[derive(Serialize)]
pub struct Opaque {
    n: u8,
}

pub struct Outputs;

#[ai_tools]
impl Outputs {
    /// A struct.
    #[ai_tool]
    fn weather(&self, windy: bool) -> Weather {
        Weather {
            celsius: 21,
            sky: Sky::Clear,
            wind: windy.then_some(Wind { knots: 12 }),
        }
    }

    /// The `Ok` value of a `Result`, async.
    #[ai_tool]
    async fn forecast(&self, day: u8) -> Result<Weather, String> {
        if day > 7 {
            return Err("too far ahead".into());
        }
        Ok(Weather {
            celsius: -3,
            sky: Sky::Cloudy,
            wind: None,
        })
    }

    /// A list: a schema, but not an object.
    #[ai_tool]
    fn winds(&self) -> Vec<Wind> {
        vec![Wind { knots: 3 }]
    }

    /// Text.
    #[ai_tool]
    fn text(&self) -> String {
        "text".into()
    }

    /// Borrowed text.
    #[ai_tool]
    fn motto(&self) -> &str {
        "motto"
    }

    /// Nothing.
    #[ai_tool]
    fn nothing(&self) {}

    /// Output as it is.
    #[ai_tool]
    fn raw(&self) -> ToolOutput {
        ToolOutput::text("raw")
    }

    /// Any JSON.
    #[ai_tool]
    fn any(&self) -> Value {
        json!({ "a": 1 })
    }

    /// Serializable without a schema.
    #[ai_tool]
    fn opaque(&self) -> Result<Opaque, String> {
        Ok(Opaque { n: 1 })
    }

    /// A struct turned into text by a converter.
    #[ai_tool(convert = weather_text)]
    fn converted(&self) -> Weather {
        Weather {
            celsius: 5,
            sky: Sky::Cloudy,
            wind: None,
        }
    }
}

fn weather_text(w: Weather) -> ToolOutput {
    ToolOutput::text(format!("{} degrees", w.celsius))
}

fn executor() -> Executor {
    serving(Outputs)
}

fn output_schema(exec: &Executor, tool: &str) -> Option<Value> {
    exec.spec(tool).unwrap().output_schema.clone()
}

#[test]
fn a_json_schema_value_gets_its_canonical_schema() {
    let exec = executor();
    let schema = output_schema(&exec, "weather").expect("a schema for a JsonSchema struct");
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["celsius"]["description"],
        "Degrees Celsius."
    );
    // Canonical as arguments are: integer formats as bounds, refs inlined, no titles.
    assert_eq!(schema["properties"]["celsius"]["minimum"], -128);
    assert_eq!(schema["properties"]["celsius"]["maximum"], 127);
    assert!(schema.get("$defs").is_none(), "{schema}");
    assert!(schema.get("title").is_none(), "{schema}");
    // serde writes every field, `wind` as `null` when absent: all required, as serde says.
    assert_eq!(schema["required"], json!(["celsius", "sky", "wind"]));
    // The `Ok` value of a `Result` has the same schema, async or not.
    assert_eq!(output_schema(&exec, "forecast"), Some(schema));
}

#[test]
fn text_empty_raw_untyped_and_converted_values_have_none() {
    let exec = executor();
    for tool in [
        "text",
        "motto",
        "nothing",
        "raw",
        "any",
        "opaque",
        "converted",
    ] {
        assert_eq!(output_schema(&exec, tool), None, "{tool}");
    }
}

#[tokio::test]
async fn what_a_tool_returns_matches_the_schema_it_declares() {
    let exec = executor();
    for (tool, args) in [
        ("weather", json!({ "windy": true })),
        ("weather", json!({ "windy": false })),
        ("forecast", json!({ "day": 1 })),
        ("winds", json!({})),
    ] {
        let schema = output_schema(&exec, tool).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let out = exec.execute(tool, args.clone()).await.unwrap();
        let structured = out.structured.expect("structured output");
        assert!(
            validator.is_valid(&structured),
            "{tool} {args}: {structured} against {schema}"
        );
    }
}

#[test]
fn mcp_declares_an_output_schema_only_for_an_object() {
    let exec = executor();
    let declare = |tool: &str| {
        let spec = exec.spec(tool).unwrap();
        declaration(spec, &spec.name, Format::Mcp, &DeclareOptions::default()).0
    };
    assert_eq!(declare("weather")["outputSchema"]["type"], "object");
    assert_eq!(output_schema(&exec, "winds").unwrap()["type"], "array");
    assert!(declare("winds").get("outputSchema").is_none());
    assert!(declare("text").get("outputSchema").is_none());
}

#[test]
fn a_result_given_from_outside_is_held_to_a_typed_tools_output_schema() {
    let exec = executor();
    let good = ToolOutput::json(json!({ "celsius": 21, "sky": "Clear", "wind": null }));
    exec.check_output("weather", &good).unwrap();
    let bad = ToolOutput::json(json!({ "celsius": "warm", "sky": "Clear" }));
    let err = exec.check_output("weather", &bad).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("its result does not follow its output schema"),
        "{text}"
    );
    assert!(text.contains("/celsius"), "{text}");
    // An error result, text, and a tool without an output schema are not held to one.
    exec.check_output("weather", &ToolOutput::error("no station"))
        .unwrap();
    exec.check_output("weather", &ToolOutput::text("sunny"))
        .unwrap();
    let unknown = exec.check_output("nope", &good).unwrap_err();
    assert!(
        matches!(unknown, ToolError::UnknownTool { .. }),
        "{unknown:?}"
    );
}
