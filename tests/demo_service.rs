//! The issue's demo service, end to end through the macros and the executor.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ai_tool::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct DemoService {
    calls: AtomicUsize,
}

#[derive(Debug, Serialize)]
pub struct DemoDto {
    name: String,
    value: i32,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    kind: Category,
    categories: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Category {
    Room,
    Bike,
    Plane,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ComplexInput {
    /// A nullable but required property.
    nullable_but_required: Option<String>,
    #[schemars(length(max = 10))]
    max_length_10: String,
    #[schemars(length(min = 5))]
    min_length_5: String,
    kind: Category,
    #[schemars(length(min = 2, max = 5))]
    categories: Vec<Category>,
}

#[derive(Debug, PartialEq)]
pub struct CheckError(String);

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "check refused: {}", self.0)
    }
}

#[derive(Debug, Serialize)]
pub struct OtherDto {
    id: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Search {
    /// What to look for.
    query: String,
    /// How many results.
    #[serde(default)]
    limit: Option<u32>,
}

#[ai_tools]
impl DemoService {
    /// Has input but no return.
    #[ai_tool(name = "do_something", description = "has input but no return")]
    async fn do_something(&self, #[arg(description = "this is an arg")] arg: String) {
        assert!(!arg.is_empty());
        self.calls.fetch_add(1, Ordering::SeqCst);
    }

    /// Gets a demo value.
    #[ai_tool(convert = Self::demo_to_text)]
    async fn get_demo(&self, name: String, value: i32) -> DemoDto {
        DemoDto { name, value }
    }

    fn demo_to_text(dto: DemoDto, ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!(
            "[{}] {} = {}",
            ctx.tool_name(),
            dto.name,
            dto.value
        ))
    }

    /// Checks a complex input.
    #[ai_tool]
    fn check(&self, input: ComplexInput) -> Result<Summary, CheckError> {
        if input.max_length_10 == "refuse" && input.nullable_but_required.is_none() {
            return Err(CheckError(input.min_length_5));
        }
        Ok(Summary {
            kind: input.kind,
            categories: input.categories.len(),
        })
    }

    /// Gets another value, converted by a converter defined elsewhere.
    #[ai_tool]
    fn get_other(&self, id: u32) -> OtherDto {
        OtherDto { id }
    }

    /// Greets someone.
    #[ai_tool(title = "Greeter", category = "social", purpose = "greeting", purpose = "politeness",
              selectable, keywords = ["hello", "welcome"], examples = ["say hi to Ann"],
              read_only, idempotent, destructive = false, open_world = false)]
    fn greet(&self, name: &str, #[arg(default = 1)] times: u8, title: Option<String>) -> String {
        let who = match title {
            Some(title) => format!("{title} {name}"),
            None => name.to_owned(),
        };
        vec![format!("Hello, {who}!"); times.into()].join(" ")
    }

    /// Searches, with the arguments object being the struct itself.
    #[ai_tool]
    fn search(&self, #[arg(flatten)] search: Search, ctx: &ToolContext) -> ToolOutput {
        ToolOutput::json(json!({
            "query": search.query,
            "limit": search.limit,
            "call_id": ctx.call_id(),
            "answer": ctx.service::<Answer>().map(|a| a.0),
        }))
    }

    /// Returns a borrowed string.
    #[ai_tool]
    fn motto(&self) -> &str {
        "borrowed"
    }
}

pub struct Answer(u32);

#[ai_tool_converter("get_other")]
fn other_to_output(v: OtherDto, ctx: &ToolContext) -> ToolOutput {
    ToolOutput::text(format!("other #{} via {}", v.id, ctx.tool_name()))
}

#[ai_tool(description = "Adds two numbers")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn executor() -> Executor {
    Executor::builder()
        .service(Arc::new(DemoService {
            calls: AtomicUsize::new(0),
        }))
        .provide(Arc::new(Answer(42)))
        .build()
        .expect("the demo executor builds")
}

fn spec<'a>(exec: &'a Executor, name: &str) -> &'a ToolSpec {
    exec.spec(name)
        .unwrap_or_else(|| panic!("tool {name} is registered"))
}

fn complex_ok() -> Value {
    json!({
        "nullable_but_required": null,
        "max_length_10": "short",
        "min_length_5": "long enough",
        "kind": "Bike",
        "categories": ["Room", "Plane"]
    })
}

#[test]
fn lists_every_tool_in_name_order() {
    let exec = executor();
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "add",
            "check",
            "do_something",
            "get_demo",
            "get_other",
            "greet",
            "motto",
            "search"
        ]
    );
}

#[test]
fn description_comes_from_attribute_or_doc_comment() {
    let exec = executor();
    assert_eq!(
        spec(&exec, "do_something").description,
        "has input but no return"
    );
    assert_eq!(spec(&exec, "check").description, "Checks a complex input.");
    assert_eq!(spec(&exec, "add").description, "Adds two numbers");
}

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
fn metadata_from_the_attribute_is_in_the_spec() {
    let exec = executor();
    let m = &spec(&exec, "greet").metadata;
    assert_eq!(m.title.as_deref(), Some("Greeter"));
    assert_eq!(m.category.as_deref(), Some("social"));
    assert_eq!(m.purposes, ["greeting", "politeness"]);
    assert!(m.selectable);
    assert_eq!(m.keywords, ["hello", "welcome"]);
    assert_eq!(m.examples, ["say hi to Ann"]);
    assert_eq!(m.hints.read_only, Some(true));
    assert_eq!(m.hints.idempotent, Some(true));
    assert_eq!(m.hints.destructive, Some(false));
    assert_eq!(m.hints.open_world, Some(false));
    assert!(
        !spec(&exec, "add").metadata.selectable,
        "tools are system tools unless selectable"
    );
    match &m.source {
        Some(ai_tool::ToolSource::Macro { file, line, .. }) => {
            assert!(
                file.ends_with("demo_service.rs") && *line > 100,
                "{file}:{line}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn unit_return_gives_empty_output_and_runs_the_method() {
    let exec = executor();
    let out = exec
        .execute("do_something", json!({ "arg": "hi" }))
        .await
        .unwrap();
    assert_eq!(out, ToolOutput::empty());
    assert_eq!(
        exec.services()
            .get::<DemoService>()
            .unwrap()
            .calls
            .load(Ordering::SeqCst),
        1
    );
}

#[tokio::test]
async fn converter_beside_the_method_gets_value_and_context() {
    let out = executor()
        .execute("get_demo", r#"{"name": "x", "value": 3}"#)
        .await
        .unwrap();
    assert_eq!(out.to_text(), "[get_demo] x = 3");
}

#[tokio::test]
async fn converter_defined_elsewhere_is_found_by_tool_name() {
    let out = executor()
        .execute("get_other", json!({ "id": 9 }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "other #9 via get_other");
}

#[tokio::test]
async fn serialize_return_becomes_structured_json() {
    let out = executor()
        .execute("check", json!({ "input": complex_ok() }))
        .await
        .unwrap();
    assert_eq!(
        out.structured,
        Some(json!({ "kind": "Bike", "categories": 2 }))
    );
    assert_eq!(
        executor()
            .execute("add", json!({"a": 2, "b": -5}))
            .await
            .unwrap()
            .to_text(),
        "-3"
    );
}

#[tokio::test]
async fn string_return_is_text_and_defaults_apply() {
    let exec = executor();
    let out = exec
        .execute("greet", json!({ "name": "Ann" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Ann!");
    let out = exec
        .execute("greet", json!({ "name": "Ann", "times": 2, "title": "Dr" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Dr Ann! Hello, Dr Ann!");
    let out = exec
        .execute("greet", json!({ "name": "Ann", "title": null }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Ann!");
    assert_eq!(
        exec.execute("motto", json!({})).await.unwrap().to_text(),
        "borrowed"
    );
}

#[tokio::test]
async fn err_result_is_a_tool_error_keeping_the_typed_error() {
    let mut args = complex_ok();
    args["max_length_10"] = json!("refuse");
    let err = executor()
        .execute("check", json!({ "input": args }))
        .await
        .unwrap_err();
    assert_eq!(
        err.downcast_ref::<CheckError>(),
        Some(&CheckError("long enough".into()))
    );
    assert_eq!(
        err.to_model_text(),
        "`check` failed: check refused: long enough"
    );
}

#[tokio::test]
async fn context_carries_call_id_and_provided_services() {
    let options = CallOptions::default().with_call_id("call_7");
    let out = executor()
        .execute_with("search", json!({ "query": "q" }), &options)
        .await
        .unwrap();
    assert_eq!(
        out.structured,
        Some(json!({ "query": "q", "limit": null, "call_id": "call_7", "answer": 42 }))
    );
}

#[tokio::test]
async fn complex_input_accepts_valid_and_boundary_values() {
    let exec = executor();
    let mut args = complex_ok();
    args["nullable_but_required"] = json!("present");
    args["max_length_10"] = json!("0123456789");
    args["min_length_5"] = json!("12345");
    args["categories"] = json!(["Room", "Room", "Bike", "Plane", "Bike"]);
    exec.execute("check", json!({ "input": args }))
        .await
        .unwrap();
}

/// The violations of a bad `check` call. The arguments are given as a value, as a borrowed
/// value and as JSON text, which take different paths through validation; all three must
/// report the same.
async fn violations(args: Value) -> Vec<String> {
    let exec = executor();
    let args = json!({ "input": args });
    let as_text = exec.execute("check", args.to_string()).await;
    let borrowed = exec.execute("check", &args).await;
    let owned = exec.execute("check", args).await;
    let [owned, borrowed, as_text] = [owned, borrowed, as_text].map(|result| match result {
        Err(ToolError::InvalidArguments { violations, .. }) => violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        other => panic!("expected invalid arguments, got {other:?}"),
    });
    assert_eq!(owned, borrowed, "a borrowed value is reported alike");
    assert_eq!(owned, as_text, "JSON text is reported alike");
    owned
}

#[tokio::test]
async fn valid_arguments_give_one_result_whatever_form_they_come_in() {
    let exec = executor();
    let args = json!({ "input": complex_ok() });
    let expected = exec.execute("check", args.clone()).await.unwrap();
    let text = args.to_string();
    for output in [
        exec.execute("check", &args).await.unwrap(),
        exec.execute("check", text.clone()).await.unwrap(),
        exec.execute("check", text.as_str()).await.unwrap(),
        exec.execute("check", &text).await.unwrap(),
        exec.execute("check", std::borrow::Cow::Borrowed(text.as_str()))
            .await
            .unwrap(),
    ] {
        assert_eq!(output, expected);
    }
    // Keys in any order and insignificant whitespace.
    let text = r#" { "b" : 2 ,
        "a": -40 } "#;
    assert_eq!(exec.execute("add", text).await.unwrap().to_text(), "-38");
}

#[tokio::test]
async fn rejects_string_longer_than_max_length() {
    let mut args = complex_ok();
    args["max_length_10"] = json!("abcdefghijkl");
    assert_eq!(
        violations(args).await,
        [r#"/input/max_length_10: "abcdefghijkl" is longer than 10 characters"#]
    );
}

#[tokio::test]
async fn rejects_string_shorter_than_min_length() {
    let mut args = complex_ok();
    args["min_length_5"] = json!("abc");
    assert_eq!(
        violations(args).await,
        [r#"/input/min_length_5: "abc" is shorter than 5 characters"#]
    );
}

#[tokio::test]
async fn rejects_enum_value_outside_the_enum() {
    let mut args = complex_ok();
    args["kind"] = json!("Boat");
    let got = violations(args).await;
    assert!(
        got.len() == 1 && got[0].starts_with("/input/kind: \"Boat\" is not one of"),
        "{got:?}"
    );
}

#[tokio::test]
async fn rejects_too_few_and_too_many_items() {
    let mut args = complex_ok();
    args["categories"] = json!(["Room"]);
    assert_eq!(
        violations(args.clone()).await,
        [r#"/input/categories: ["Room"] has less than 2 items"#]
    );
    args["categories"] = json!(["Room", "Room", "Room", "Room", "Room", "Room"]);
    let got = violations(args).await;
    assert!(
        got.len() == 1
            && got[0].starts_with("/input/categories:")
            && got[0].contains("more than 5 items"),
        "{got:?}"
    );
}

#[tokio::test]
async fn rejects_missing_nullable_but_required_property() {
    let mut args = complex_ok();
    args.as_object_mut()
        .unwrap()
        .remove("nullable_but_required");
    assert_eq!(
        violations(args).await,
        [r#"/input: "nullable_but_required" is a required property"#]
    );
}

#[tokio::test]
async fn reports_every_violation_at_once() {
    let args = json!({
        "nullable_but_required": 5,
        "max_length_10": "abcdefghijkl",
        "min_length_5": "abc",
        "kind": "Boat",
        "categories": [],
        "extra": "refused: a nested struct's object is closed"
    });
    assert_eq!(violations(args).await.len(), 6);
}

#[tokio::test]
async fn rejects_wrong_types_unknown_properties_and_bad_json_text() {
    let exec = executor();
    let err = exec
        .execute("add", json!({ "a": "1", "b": 2, "c": 3 }))
        .await
        .unwrap_err();
    let text = err.to_model_text();
    assert!(text.contains(r#"/a: "1" is not an integer"#), "{text}");
    assert!(
        text.contains(r#"/: unknown property "c"; the allowed ones are a, b"#),
        "{text}"
    );
    let err = exec.execute("add", "{\"a\": 1,").await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    let err = exec
        .execute("add", json!({ "a": 1.5, "b": 2 }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/a"), "{err}");
    let err = exec
        .execute("get_other", json!({ "id": -1 }))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("/id: -1 is less than the minimum of 0"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_tool_suggests_close_names() {
    let err = executor().execute("get_dmeo", json!({})).await.unwrap_err();
    match &err {
        ToolError::UnknownTool { suggestions, .. } => assert_eq!(suggestions[0], "get_demo"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_model_text().contains("Did you mean `get_demo`"));
}

#[test]
fn a_tool_whose_service_is_not_provided_is_not_exposed() {
    let exec = Executor::builder().build().unwrap();
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add"]);
}

#[test]
fn require_all_services_names_the_tool_and_the_missing_service() {
    let err = Executor::builder()
        .require_all_services()
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tool `check`") && err.contains("DemoService"),
        "{err}"
    );
    assert!(err.contains("demo_service.rs"), "{err}");
}

#[test]
fn validate_checks_without_running() {
    let exec = executor();
    assert!(exec.validate("add", &json!({"a": 1, "b": 2})).is_ok());
    assert!(exec.validate("add", &json!({"a": 1})).is_err());
    assert!(matches!(
        exec.validate("nope", &json!({})),
        Err(ToolError::UnknownTool { .. })
    ));
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
