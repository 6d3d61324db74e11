//! Hand-written tools (the `Tool` trait) and fluent registration: the example's `get_weather`
//! is declared, validated and called exactly as the same tool written with `#[ai_tool]`, and
//! the builder checks hand-written tools as it checks every other.

mod common;
#[allow(dead_code)]
#[path = "../examples/hand_written.rs"]
mod example;

use std::time::Duration;

use ai_tool::prelude::*;
use ai_tool::{BuildProblem, ExecutorBuilder, SafetyHints, ToolSource};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use common::tools::echo;
use example::{forecast, Forecast, UnknownLocation};

// The example's tool, written with the macro: same name, description, argument and metadata.
/// Retrieves weather information for a specified location.
#[ai_tool(
    name = "get_weather",
    title = "Weather Getter",
    category = "Service",
    purpose = "document_processing",
    selectable,
    keywords = ["weather", "forecast"],
    examples = ["Will it rain in Lyon today?"],
    read_only
)]
fn get_weather_by_macro(
    #[arg(description = "The geographic location for which the weather information is requested.")]
    location: String,
) -> Result<Forecast, UnknownLocation> {
    forecast(&location)
}

/// The macro's tools: `get_weather` and `book`.
fn by_macro() -> Executor {
    Executor::builder().build().expect("the macro tools build")
}

/// The example's `get_weather`, registered as the example registers it.
fn by_hand() -> Executor {
    example::with_weather(Executor::builder().registered_tools(false))
        .build()
        .expect("the hand-written tool builds")
}

/// A spec without where it was defined, the one thing the two versions do not share.
fn without_source(exec: &Executor, name: &str) -> ToolSpec {
    let mut spec = exec.spec(name).expect("the tool exists").clone();
    spec.metadata.source = None;
    spec
}

const FORMATS: [Format; 6] = [
    Format::OpenAiChat,
    Format::OpenAiResponses,
    Format::Anthropic,
    Format::Gemini,
    Format::Bedrock,
    Format::Mcp,
];

#[test]
fn the_hand_written_tool_is_declared_as_the_macro_version() {
    let (by_hand, by_macro) = (by_hand(), by_macro());
    let spec = without_source(&by_hand, "get_weather");
    assert_eq!(spec, without_source(&by_macro, "get_weather"));
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "The geographic location for which the weather information is requested."
                }
            },
            "required": ["location"],
            "additionalProperties": false
        })
    );
    assert_eq!(spec.metadata.title.as_deref(), Some("Weather Getter"));
    assert_eq!(spec.metadata.category.as_deref(), Some("Service"));
    assert_eq!(spec.metadata.purposes, ["document_processing"]);
    assert!(spec.metadata.selectable);
    assert_eq!(spec.metadata.keywords, ["weather", "forecast"]);
    assert_eq!(spec.metadata.hints.read_only, Some(true));
    for format in FORMATS {
        let options = DeclareOptions::default();
        let declare = |exec: &Executor| {
            let spec = exec.spec("get_weather").expect("declared");
            ai_tool::provider::declare([spec], format, &options).tools
        };
        assert_eq!(declare(&by_hand), declare(&by_macro), "{format:?}");
    }
}

#[test]
fn the_hand_written_tool_names_where_it_was_registered() {
    let exec = by_hand();
    match &exec.spec("get_weather").unwrap().metadata.source {
        Some(ToolSource::Registered { file, line }) => {
            assert!(file.ends_with("hand_written.rs"), "{file}");
            assert!(*line > 0);
        }
        other => panic!("expected the registration's place, got {other:?}"),
    }
}

#[tokio::test]
async fn bad_arguments_are_refused_with_the_macro_versions_text() {
    let (by_hand, by_macro) = (by_hand(), by_macro());
    let bad: [Value; 6] = [
        json!({}),
        json!({ "city": "Lyon" }),
        json!({ "location": 42 }),
        json!({ "location": null }),
        json!({ "location": "Lyon", "days": 3 }),
        json!(["Lyon"]),
    ];
    for args in bad {
        let hand = by_hand.execute("get_weather", &args).await.unwrap_err();
        let with_macro = by_macro.execute("get_weather", &args).await.unwrap_err();
        assert_eq!(hand.kind(), ToolErrorKind::InvalidArguments, "{args}");
        assert_eq!(hand.to_model_text(), with_macro.to_model_text(), "{args}");
        assert_eq!(hand.to_string(), with_macro.to_string(), "{args}");
        let checked = by_hand.validate("get_weather", &args).unwrap_err();
        assert_eq!(checked.to_model_text(), hand.to_model_text(), "{args}");
    }
    // As JSON text too, which the stages read in place.
    for text in [r#"{"location": 1}"#, r#"{"location": "Lyon""#, "  ", "[]"] {
        let hand = by_hand.execute("get_weather", text).await;
        let with_macro = by_macro.execute("get_weather", text).await;
        assert_eq!(
            hand.map_err(|e| e.to_model_text()),
            with_macro.map_err(|e| e.to_model_text()),
            "{text}"
        );
    }
}

#[tokio::test]
async fn calls_return_what_the_macro_version_returns() {
    let (by_hand, by_macro) = (by_hand(), by_macro());
    let args = json!({ "location": "Lyon" });
    let hand = by_hand.execute("get_weather", &args).await.unwrap();
    assert_eq!(hand, by_macro.execute("get_weather", &args).await.unwrap());
    assert_eq!(
        hand.structured,
        Some(json!({ "location": "Lyon", "sky": "sunny", "high_celsius": 24 }))
    );

    let args = r#"{"location": "Atlantis"}"#;
    let hand = by_hand.execute("get_weather", args).await.unwrap_err();
    let with_macro = by_macro.execute("get_weather", args).await.unwrap_err();
    assert_eq!(hand.kind(), ToolErrorKind::Failed);
    assert_eq!(hand.to_model_text(), with_macro.to_model_text());
    assert!(hand.to_model_text().contains("no forecast for `Atlantis`"));
    let typed = hand.downcast_ref::<UnknownLocation>().expect("typed error");
    assert_eq!(typed.0, "Atlantis");
    assert!(with_macro.downcast_ref::<UnknownLocation>().is_some());
}

/// A constrained arguments type: the Validating stage checks it as it does the macro's.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BookArgs {
    /// How many nights.
    #[schemars(range(min = 1, max = 9))]
    nights: u8,
    /// The guest's name.
    #[schemars(length(max = 8))]
    guest: String,
    /// Extras.
    #[serde(default)]
    extras: Vec<Extra>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub enum Extra {
    Breakfast,
    Parking,
}

struct Book;

impl Tool for Book {
    type Args = BookArgs;
    type Output = String;

    fn name(&self) -> &str {
        "book"
    }

    fn description(&self) -> &str {
        "Books a room."
    }

    async fn call(&self, args: BookArgs, ctx: &ToolContext<'_>) -> String {
        format!(
            "{} x{} for {} ({} extras, call {})",
            ctx.tool_name(),
            args.nights,
            args.guest,
            args.extras.len(),
            ctx.call_id().unwrap_or("-")
        )
    }
}

/// Books a room.
#[ai_tool]
fn book(#[arg(flatten)] args: BookArgs, ctx: &ToolContext) -> String {
    format!(
        "{} x{} for {} ({} extras, call {})",
        ctx.tool_name(),
        args.nights,
        args.guest,
        args.extras.len(),
        ctx.call_id().unwrap_or("-")
    )
}

#[tokio::test]
async fn constrained_arguments_are_checked_as_the_macro_checks_them() {
    let by_hand = Executor::builder()
        .registered_tools(false)
        .tool(Book)
        .build()
        .unwrap();
    let by_macro = by_macro();
    assert_eq!(
        without_source(&by_hand, "book"),
        without_source(&by_macro, "book")
    );
    let cases = [
        json!({ "nights": 2, "guest": "Ada" }),
        json!({ "nights": 2, "guest": "Ada", "extras": ["Parking", "Breakfast"] }),
        json!({ "nights": 0, "guest": "Ada" }),
        json!({ "nights": 12, "guest": "Adalovelace", "extras": ["Spa"] }),
        json!({ "nights": 2.5, "guest": "Ada", "more": true }),
    ];
    let options = CallOptions::default().with_call_id("c1");
    for args in cases {
        let text = args.to_string();
        let hand = by_hand.execute_with("book", text.as_str(), &options).await;
        let with_macro = by_macro.execute_with("book", text.as_str(), &options).await;
        assert_eq!(
            hand.map_err(|e| e.to_model_text()),
            with_macro.map_err(|e| e.to_model_text()),
            "{text}"
        );
    }
    let out = by_hand
        .execute_with("book", json!({ "nights": 2, "guest": "Ada" }), &options)
        .await
        .unwrap();
    assert_eq!(out.to_text(), "book x2 for Ada (0 extras, call c1)");
}

/// A hand-written tool whose schema is written as JSON.
struct Shout;

impl Tool for Shout {
    type Args = Value;
    type Output = Result<String, String>;

    fn name(&self) -> &str {
        "shout"
    }

    fn description(&self) -> &str {
        "Upper-cases text."
    }

    fn parameters(&self) -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": { "text": { "type": "string", "maxLength": 5 } },
            "required": ["text"]
        }))
    }

    async fn call(&self, args: Value, _ctx: &ToolContext<'_>) -> Self::Output {
        let text = args["text"].as_str().ok_or("no text")?;
        Ok(text.to_uppercase())
    }
}

#[tokio::test]
async fn a_written_schema_is_enforced_as_written() {
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(Shout)
        .build()
        .unwrap();
    let spec = exec.spec("shout").unwrap();
    assert_eq!(spec.parameters, Shout.parameters().unwrap());
    let out = exec
        .execute("shout", json!({ "text": "hey" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "HEY");
    // Written without additionalProperties: other properties are allowed, as written.
    assert!(exec
        .execute("shout", json!({ "text": "hey", "loud": true }))
        .await
        .is_ok());
    let err = exec
        .execute("shout", json!({ "text": "too long" }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_model_text().contains("/text"), "{err}");
}

#[tokio::test]
async fn the_fluent_metadata_overrides_and_adds_to_the_tools_own() {
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(Shout, |tool| {
            tool.name("yell")
                .description("Yells.")
                .purpose("fun")
                .purpose("tests")
                .keywords(["loud"])
                .keywords(["caps"])
                .examples(["Say it louder"])
                .input_examples([json!({ "text": "hi" })])
                .destructive()
                .idempotent()
                .open_world()
                .timeout(Duration::from_secs(2))
        })
        .build()
        .unwrap();
    assert!(exec.spec("shout").is_none());
    let spec = exec.spec("yell").unwrap();
    assert_eq!(spec.description, "Yells.");
    assert_eq!(spec.metadata.purposes, ["fun", "tests"]);
    assert_eq!(spec.metadata.keywords, ["loud", "caps"]);
    assert_eq!(spec.metadata.examples, ["Say it louder"]);
    assert_eq!(spec.metadata.input_examples, [json!({ "text": "hi" })]);
    assert_eq!(
        spec.metadata.hints,
        SafetyHints {
            read_only: None,
            destructive: Some(true),
            idempotent: Some(true),
            open_world: Some(true),
        }
    );
    assert_eq!(spec.metadata.timeout_ms, Some(2000));
    assert!(!spec.metadata.selectable);
    let out = exec.execute("yell", json!({ "text": "a" })).await.unwrap();
    assert_eq!(out.to_text(), "A");

    let closed = SafetyHints {
        open_world: Some(false),
        ..SafetyHints::default()
    };
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(Shout, |tool| tool.open_world().hints(closed))
        .build()
        .unwrap();
    assert_eq!(exec.spec("shout").unwrap().metadata.hints, closed);
}

#[tokio::test]
async fn a_closure_takes_the_same_fluent_metadata() {
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(echo("text.echo", json!({ "type": "object" })), |tool| {
            tool.title("Echo")
                .category("Text")
                .selectable()
                .read_only()
                .requires_approval()
        })
        .tool_with(Shout, |tool| tool.title("Shout"))
        .build()
        .unwrap();
    let spec = exec.spec("text.echo").unwrap();
    assert_eq!(spec.metadata.title.as_deref(), Some("Echo"));
    assert_eq!(spec.metadata.category.as_deref(), Some("Text"));
    assert!(spec.metadata.selectable);
    assert_eq!(spec.metadata.hints.read_only, Some(true));
    assert!(spec.metadata.requires_approval);
    assert_eq!(spec.metadata.source, Some(ToolSource::Dynamic));
    assert_eq!(
        exec.spec("shout").unwrap().metadata.title.as_deref(),
        Some("Shout")
    );
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["text.echo", "shout"], "in the order added");
}

#[test]
fn a_builder_with_tools_added_carries_on_in_another_function() {
    fn tools() -> ExecutorBuilder {
        Executor::builder()
            .registered_tools(false)
            .tool_with(Shout, |tool| {
                // The spec as the tool gives it, before the metadata.
                assert_eq!(tool.spec().name, "shout");
                assert_eq!(tool.spec().metadata.title, None);
                tool.title("Shout")
            })
    }
    let exec = tools().tool(Book).build().unwrap();
    assert_eq!(exec.len(), 2);
    assert_eq!(
        exec.spec("shout").unwrap().metadata.title.as_deref(),
        Some("Shout")
    );
}

/// A tool whose name, description or schema `build()` refuses.
struct Misfit {
    name: &'static str,
    description: &'static str,
    parameters: Option<Value>,
}

impl Tool for Misfit {
    type Args = Value;
    type Output = ();

    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        self.description
    }

    fn parameters(&self) -> Option<Value> {
        self.parameters.clone()
    }

    async fn call(&self, _args: Value, _ctx: &ToolContext<'_>) {}
}

fn misfit(name: &'static str) -> Misfit {
    Misfit {
        name,
        description: "Fits nowhere.",
        parameters: Some(json!({ "type": "object" })),
    }
}

/// A tool whose derived schema is not an object's.
struct Counter;

impl Tool for Counter {
    type Args = i64;
    type Output = String;

    fn name(&self) -> &str {
        "counter"
    }

    fn description(&self) -> &str {
        "Counts."
    }

    async fn call(&self, n: i64, _ctx: &ToolContext<'_>) -> String {
        n.to_string()
    }
}

#[test]
fn build_checks_hand_written_tools_as_every_other() {
    let err = Executor::builder()
        .registered_tools(false)
        .tool(misfit("text.upper")) // MCP's dotted names are for dynamic tools only
        .tool_with(misfit("ok"), |tool| tool.description("  "))
        .tool(Misfit {
            parameters: Some(json!({ "type": "string" })),
            ..misfit("text_root")
        })
        .tool(Misfit {
            parameters: Some(json!({ "type": 12 })),
            ..misfit("not_a_schema")
        })
        .tool(Counter)
        .build()
        .unwrap_err();
    let problems = &err.problems;
    assert_eq!(problems.len(), 5, "{err}");
    assert!(
        matches!(&problems[0], BuildProblem::BadName { problem, .. } if problem.to_string().contains("`.`")),
        "{err}"
    );
    assert!(
        matches!(&problems[1], BuildProblem::BadSpec { name, problem, .. } if name == "ok" && *problem == ai_tool::SpecError::EmptyDescription),
        "{err}"
    );
    assert!(
        matches!(&problems[2], BuildProblem::BadSpec { name, .. } if name == "text_root"),
        "{err}"
    );
    assert!(
        matches!(&problems[3], BuildProblem::BadSchema { name, .. } if name == "not_a_schema"),
        "{err}"
    );
    assert!(
        matches!(&problems[4], BuildProblem::BadSchema { name, .. } if name == "counter"),
        "{err}"
    );
    // Each names where the tool was registered.
    assert!(err.to_string().contains("tests/hand_written.rs:"), "{err}");
}

#[test]
fn a_hand_written_tool_and_a_macro_tool_of_one_name_are_a_build_error() {
    let err = example::with_weather(Executor::builder())
        .build()
        .unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    let BuildProblem::DuplicateTool {
        name,
        first,
        second,
    } = &err.problems[0]
    else {
        panic!("expected a duplicate, got {err}");
    };
    assert_eq!(name, "get_weather");
    assert!(first.to_string().contains("hand_written.rs"), "{first}");
    assert!(
        matches!(second, ToolSource::Registered { file, .. } if file.ends_with("hand_written.rs")),
        "{second}"
    );
}

/// A slow tool, for the time limit.
struct Sleepy;

impl Tool for Sleepy {
    type Args = Map<String, Value>; // any object
    type Output = &'static str;

    fn name(&self) -> &str {
        "sleepy"
    }

    fn description(&self) -> &str {
        "Sleeps an hour."
    }

    async fn call(&self, _args: Map<String, Value>, _ctx: &ToolContext<'_>) -> &'static str {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "rested"
    }
}

/// A tool that panics.
struct Boom;

impl Tool for Boom {
    type Args = Map<String, Value>; // any object
    type Output = ();

    fn name(&self) -> &str {
        "boom"
    }

    fn description(&self) -> &str {
        "Panics."
    }

    async fn call(&self, _args: Map<String, Value>, _ctx: &ToolContext<'_>) {
        panic!("boom")
    }
}

#[tokio::test(start_paused = true)]
async fn a_hand_written_tool_is_guarded_as_a_macro_tool() {
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(Sleepy, |tool| tool.timeout(Duration::from_millis(50)))
        .tool(Boom)
        .build()
        .unwrap();
    let err = exec.execute("sleepy", "{}").await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::TimedOut);
    let err = exec.execute("boom", "{}").await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Panicked);

    let token = CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(exec.execute_with("sleepy", "{}", &options), cancel);
    assert_eq!(result.unwrap_err().kind(), ToolErrorKind::Cancelled);
}
