//! Tools defined at run time and tools read from catalog files share the registry.

mod common;

use ai_tool::prelude::*;
use ai_tool::schema::SchemaError;
use ai_tool::{BuildProblem, SpecError, ToolMetadata, ToolSource};
use serde_json::{json, Value};

use common::tools::{executor_of, noop};
use common::TempFile;

fn upper() -> DynamicTool {
    DynamicTool::new(
        "text.upper",
        "Upper-cases text",
        json!({ "type": "object", "properties": { "text": { "type": "string", "maxLength": 5 } }, "required": ["text"] }),
        |args, ctx| async move {
            let text = args["text"].as_str().unwrap_or_default().to_uppercase();
            Ok(ToolOutput::text(format!("{text} ({})", ctx.tool_name())))
        },
    )
}

fn catalog_file(lines: &[&str]) -> TempFile {
    TempFile::with_lines("catalog.jsonl", lines)
}

#[tokio::test]
async fn a_dynamic_tool_runs_and_its_schema_is_enforced_as_written() {
    let exec = executor_of([upper()]).unwrap();
    assert_eq!(
        exec.execute("text.upper", json!({ "text": "abc" }))
            .await
            .unwrap()
            .to_text(),
        "ABC (text.upper)"
    );
    let err = exec
        .execute("text.upper", json!({ "text": "abcdef" }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/text"), "{err}");
    // Written without additionalProperties: extra properties are allowed, as written.
    assert!(exec
        .execute("text.upper", json!({ "text": "a", "extra": 1 }))
        .await
        .is_ok());
    assert_eq!(
        exec.spec("text.upper")
            .unwrap()
            .parameters
            .get("additionalProperties"),
        None
    );
}

#[tokio::test]
async fn catalog_tools_are_listed_and_validated_but_not_executed() {
    let file = catalog_file(&[
        r#"{"name":"github.repos.list","description":"Lists repositories","parameters":{"type":"object","properties":{"owner":{"type":"string"}},"required":["owner"]}}"#,
        r#"{"type":"function","function":{"name":"weather","description":"Weather","parameters":{"type":"object","properties":{}}}}"#,
    ]);
    let exec = Executor::builder()
        .registered_tools(false)
        .catalog_file(file.path())
        .build()
        .unwrap();
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["github.repos.list", "weather"]);
    assert!(exec
        .validate("github.repos.list", json!({ "owner": "me" }))
        .is_ok());
    assert!(exec.validate("github.repos.list", json!({})).is_err());
    assert!(!exec.is_executable("weather"));
    let err = exec.execute("weather", json!({})).await.unwrap_err();
    assert!(matches!(err, ToolError::NotExecutable { .. }), "{err:?}");
}

#[test]
fn a_malformed_catalog_line_is_a_build_error_naming_file_and_line() {
    let file = catalog_file(&[
        r#"{"name":"ok","description":"fine"}"#,
        "",
        r#"{"name": "broken""#,
    ]);
    let err = Executor::builder()
        .registered_tools(false)
        .catalog_file(file.path())
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("{}:3: malformed JSON", file.path().display())),
        "{text}"
    );
}

#[test]
fn a_bad_catalog_schema_is_an_error_naming_file_and_line() {
    let file = catalog_file(&[
        r#"{"name":"t","parameters":{"type":"object","properties":{"a":{"type":"bogus"}}}}"#,
    ]);
    let err = Executor::builder()
        .registered_tools(false)
        .catalog_file(file.path())
        .build()
        .unwrap_err();
    assert!(err.to_string().contains(":1:"), "{err}");
}

#[test]
fn a_missing_catalog_file_is_an_error_naming_it() {
    let err = Executor::builder()
        .catalog_file("/no/such/catalog.jsonl")
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("/no/such/catalog.jsonl: cannot read"),
        "{err}"
    );
}

#[test]
fn two_tools_with_one_name_are_a_build_error_naming_both() {
    let file = catalog_file(&[r#"{"name":"text.upper","description":"again"}"#]);
    let err = Executor::builder()
        .registered_tools(false)
        .tool(upper())
        .catalog_file(file.path())
        .build()
        .unwrap_err();
    assert!(
        matches!(&err.problems[..], [BuildProblem::DuplicateTool { .. }]),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("a tool defined at run time") && text.contains(":1"),
        "{text}"
    );
}

#[test]
fn a_dynamic_tool_with_a_bad_name_or_schema_is_a_build_error() {
    let bad_name = noop("has space", "x", json!({"type": "object"}));
    let bad_schema = noop("ok", "x", json!({"type": 12}));
    let err = executor_of([bad_name, bad_schema]).unwrap_err();
    // Each problem is typed: where the tool was defined, and why, reachable as its source.
    match &err.problems[..] {
        [BuildProblem::BadName {
            defined_in: ToolSource::Dynamic,
            problem,
        }, BuildProblem::BadSchema {
            name,
            defined_in: ToolSource::Dynamic,
            problem: SchemaError::Invalid { at, .. },
        }] => {
            assert!(problem.to_string().contains("has space"), "{problem}");
            assert_eq!((name.as_str(), at.as_str()), ("ok", "/type"));
            // Said once, where the tool is from after what is wrong with it.
            let text = err.problems[0].to_string();
            assert_eq!(text, format!("{problem} (a tool defined at run time)"));
        }
        other => panic!("{other:?}"),
    }
    let source = std::error::Error::source(&err.problems[1]).expect("the schema error");
    assert!(source.is::<SchemaError>(), "{source}");
}

#[test]
fn a_dynamic_tool_whose_schema_is_not_an_object_or_whose_description_is_empty_is_a_build_error() {
    let text_root = noop("shout", "Upper-cases text", json!({ "type": "string" }));
    let undescribed = noop("quiet", "", json!({ "type": "object" }));
    let err = executor_of([text_root, undescribed]).unwrap_err();
    assert!(
        matches!(
            &err.problems[..],
            [BuildProblem::BadSpec { .. }, BuildProblem::BadSpec { .. }]
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("tool `shout` (a tool defined at run time): the arguments schema's root must be `\"type\": \"object\"` (arguments are always a JSON object), but its type is \"string\""),
        "{text}"
    );
    assert!(
        text.contains("tool `quiet` (a tool defined at run time): the description is empty; say what the tool does, for the model"),
        "{text}"
    );
    // A tool with both problems has both told, at once.
    let both = noop("mute", " ", json!({ "type": "string" }));
    let err = executor_of([both]).unwrap_err();
    let told: Vec<&SpecError> = err
        .problems
        .iter()
        .filter_map(|p| match p {
            BuildProblem::BadSpec { problem, .. } => Some(problem),
            _ => None,
        })
        .collect();
    assert!(
        matches!(
            told[..],
            [SpecError::RootNotObject { .. }, SpecError::EmptyDescription]
        ),
        "{err}"
    );
}

#[test]
fn metadata_can_be_given_to_a_dynamic_tool() {
    let tool = upper().with_metadata(ToolMetadata {
        keywords: vec!["caps".into()],
        ..Default::default()
    });
    let exec = executor_of([tool]).unwrap();
    let spec = exec.spec("text.upper").unwrap();
    assert_eq!(spec.metadata.keywords, ["caps"]);
    assert!(spec.metadata.source.is_some(), "the source is kept");
}

#[tokio::test]
async fn a_dynamic_closure_that_panics_before_returning_its_future_is_a_caught_panic() {
    let boom = DynamicTool::new(
        "boom",
        "Panics before it has a future",
        json!({ "type": "object" }),
        |args: serde_json::Value, _ctx| {
            if args.get("now").is_some() {
                panic!("at once");
            }
            std::future::ready(Ok(ToolOutput::text("later")))
        },
    );
    let exec = Executor::builder().tool(boom).build().unwrap();
    let err = exec.execute("boom", json!({ "now": 1 })).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Panicked, "{err}");
    assert!(err.to_string().contains("at once"), "{err}");
    let out = exec.execute("boom", json!({})).await.unwrap();
    assert_eq!(out.to_text(), "later", "the executor goes on serving");
}

/// A dynamic tool that declares an output schema (as every MCP tool imported with an
/// `outputSchema` does) has its structured results checked against it.
#[tokio::test]
async fn a_structured_result_off_the_output_schema_fails_the_call_naming_what_is_wrong() {
    let total = |value: serde_json::Value| {
        let schema = json!({ "type": "object" });
        DynamicTool::new("total", "Totals", schema, move |_, _| {
            let value = value.clone();
            async move { Ok(ToolOutput::json(value)) }
        })
        .with_output_schema(json!({
            "type": "object",
            "properties": { "total": { "type": "integer" } },
            "required": ["total"]
        }))
    };
    let exec = |value| executor_of([total(value)]).unwrap();
    let out = exec(json!({ "total": 42 }))
        .execute("total", json!({}))
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!({ "total": 42 })));
    let err = exec(json!({ "total": "42" }))
        .execute("total", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed, "{err}");
    let text = err.to_model_text();
    assert!(
        text.contains("output schema") && text.contains("/total"),
        "{text}"
    );
}

#[test]
fn an_unusable_output_schema_is_a_build_problem_naming_the_tool() {
    let tool = noop("odd", "Odd", json!({ "type": "object" }))
        .with_output_schema(json!({ "type": "strnig" }));
    let err = executor_of([tool]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`odd`") && text.contains("output schema"),
        "{text}"
    );
}

#[test]
fn a_catalog_lines_strict_true_asks_strict_mode_for_that_tool() {
    let file = catalog_file(&[
        r#"{"type":"function","function":{"name":"loose","description":"Loose","parameters":{"type":"object","properties":{}},"strict":false}}"#,
        r#"{"name":"tight","description":"Tight","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false},"strict":true}"#,
        r#"{"name":"plain","description":"Plain","parameters":{"type":"object","properties":{}}}"#,
    ]);
    let exec = Executor::builder()
        .registered_tools(false)
        .catalog_file(file.path())
        .build()
        .unwrap();
    let strict: Vec<Option<bool>> = exec.tools().map(|t| t.metadata.strict).collect();
    // `false` is what OpenAI's declarations write for any tool not declared strict: it pins
    // nothing.
    assert_eq!(strict, [None, Some(true), None]);
    let declared = exec.declarations(Format::OpenAiResponses, &DeclareOptions::default());
    let flags: Vec<&Value> = declared
        .tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["strict"])
        .collect();
    assert_eq!(
        flags,
        [&json!(false), &json!(true), &json!(false)],
        "{:?}",
        declared.notes
    );
}
