//! Every API's formats: declarations, call parsing and result rendering against golden files,
//! a round trip per API, and the schema profiles' checkers.

use std::path::Path;
use std::sync::Arc;

mod common;

use ai_tool::prelude::*;
use ai_tool::profile::{self, ProfileError};
use ai_tool::provider::hosted::{ComputerEnvironment, HostedTool, SearchBy};
use ai_tool::provider::{self, CallResult};
use ai_tool::{Content, ExecutorBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use common::tools::{executor_of, noop};
use common::Rng;

pub struct WeatherService;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WeatherQuery {
    /// City and country, e.g. Paris, France.
    #[schemars(length(min = 1, max = 100))]
    location: String,
    /// The temperature unit.
    #[serde(default)]
    unit: Option<Unit>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Station {
    /// The call sign of a radio station: four capital letters.
    #[schemars(regex(pattern = r"^[A-Z]{4}$"))]
    sign: String,
}

#[derive(Debug, Serialize)]
pub struct Weather {
    location: String,
    temperature: f64,
    unit: Unit,
}

#[ai_tools]
impl WeatherService {
    /// Gets the current weather in a location.
    #[ai_tool(read_only, open_world, title = "Current weather")]
    fn get_weather(&self, #[arg(flatten)] query: WeatherQuery) -> Weather {
        let unit = query.unit.unwrap_or(Unit::Celsius);
        let celsius = 10.0 + query.location.len() as f64;
        let temperature = match unit {
            Unit::Celsius => celsius,
            Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
        };
        Weather {
            location: query.location,
            temperature,
            unit,
        }
    }

    /// Gets the most popular song played on a radio station.
    #[ai_tool]
    fn top_song(&self, #[arg(flatten)] station: Station) -> String {
        format!(
            "Elemental Hotel by 8 Storey Hike is the top song on {}",
            station.sign
        )
    }
}

pub struct Reports;

/// A quarterly report: a summary, the PDF, where the data lives, and a spoken digest.
pub struct Report {
    summary: String,
    pdf_base64: String,
    data_uri: String,
    digest_wav_base64: String,
}

#[ai_tools]
impl Reports {
    /// Writes the quarterly report of a region.
    #[ai_tool(convert = report_output)]
    fn quarterly_report(&self, region: String) -> Report {
        Report {
            summary: format!("Sales in {region} rose 4%."),
            pdf_base64: "JVBERi0xLjQK".into(),
            data_uri: format!("reports://{}/q3.csv", region.to_lowercase()),
            digest_wav_base64: "UklGRg==".into(),
        }
    }
}

/// A converter that returns attachments: the PDF, a link to the data, the audio digest.
fn report_output(report: Report) -> ToolOutput {
    ToolOutput::text(report.summary)
        .with_content(Content::file(
            report.pdf_base64,
            "application/pdf",
            "q3 report.pdf",
        ))
        .with_content(Content::ResourceLink {
            uri: report.data_uri,
            name: "q3.csv".into(),
            title: Some("Q3 sales data".into()),
            description: None,
            mime_type: Some("text/csv".into()),
        })
        .with_content(Content::audio(report.digest_wav_base64, "audio/wav"))
}

/// A converter's attachments reach every API as it takes them (golden files checked by the
/// SDKs' types: `tests/sdk/check_wire.py`): Anthropic a `document`, Responses an `input_file`,
/// Gemini an `inlineData` part, Bedrock a `document`, MCP a resource, link and audio; what an
/// API has no place for is told in words after the text.
#[tokio::test]
async fn a_converters_attachments_are_rendered_for_each_api() {
    let exec = Executor::builder()
        .service(Arc::new(Reports))
        .build()
        .unwrap();
    let call = ToolCall::new("call_1", "quarterly_report", json!({ "region": "Nordics" }));
    let results = exec.execute_calls(std::slice::from_ref(&call)).await;
    let output = results[0].result.as_ref().unwrap();
    assert_eq!(output.attachments().count(), 3);
    for format in Format::ALL {
        let declared = exec.declarations(format, &DeclareOptions::default());
        let rendered = provider::render_results(format, &results, &declared.aliases);
        golden(
            &format!("{}/rich-results.json", format.name()),
            &pretty(&rendered),
        );
        let text = rendered.to_string();
        // Chat Completions takes text alone: the PDF is named there.
        let pdf = match format {
            Format::OpenAiChat => "[file q3 report.pdf (application/pdf, 9 bytes) not shown]",
            _ => "JVBERi0xLjQK",
        };
        assert!(text.contains(pdf), "{format}: the PDF goes: {text}");
        assert!(
            text.contains("reports://nordics/q3.csv"),
            "{format}: the link is given: {text}"
        );
        assert!(
            text.contains("audio"),
            "{format}: the audio is named: {text}"
        );
    }
}

pub struct Calendar;

#[ai_tools]
impl Calendar {
    /// The meetings of a day.
    #[ai_tool(grammar = regex(r"\d{4}-\d{2}-\d{2}"))]
    fn agenda(&self, day: String) -> String {
        format!("{day}: standup at 9")
    }

    /// Runs a query in the calendar's query language.
    #[ai_tool(grammar = lark("start: \"meetings\" WORD\n%import common.WORD"))]
    async fn query(&self, text: &str, ctx: &ToolContext) -> String {
        let _ = ctx;
        format!("ran {text}")
    }

    /// Writes a note.
    #[ai_tool(grammar = free)]
    fn note(&self, note: String) -> String {
        note.to_uppercase()
    }
}

/// `#[ai_tool(grammar = ..)]`: the method's one string is the text the model writes; OpenAI
/// declares a custom tool with the grammar, the others a function of one `input` string, and a
/// regular expression is checked before the method runs.
#[tokio::test]
async fn a_grammar_key_makes_a_tool_that_takes_text() {
    let exec = Executor::builder()
        .service(Arc::new(Calendar))
        .build()
        .unwrap();
    let regex = ai_tool::TextInput::Regex {
        definition: r"\d{4}-\d{2}-\d{2}".into(),
    };
    let agenda = exec.spec("agenda").unwrap();
    assert_eq!(agenda.metadata.text_input.as_ref(), Some(&regex));
    assert_eq!(agenda.parameters, regex.schema());
    assert!(matches!(
        exec.spec("query").unwrap().metadata.text_input,
        Some(ai_tool::TextInput::Lark { .. })
    ));
    assert_eq!(
        exec.spec("note").unwrap().metadata.text_input,
        Some(ai_tool::TextInput::Free)
    );

    let responses = exec.declarations(Format::OpenAiResponses, &DeclareOptions::default());
    let declared = &responses.tools.as_array().unwrap()[0];
    assert_eq!(declared["type"], "custom");
    assert_eq!(declared["format"]["syntax"], "regex");
    let chat = exec.declarations(Format::OpenAiChat, &DeclareOptions::default());
    // In name order: agenda, note, query.
    assert_eq!(chat.tools[1]["custom"]["format"], json!({ "type": "text" }));
    assert_eq!(
        chat.tools[2]["custom"]["format"]["grammar"]["syntax"],
        "lark"
    );
    let anthropic = exec.declarations(Format::Anthropic, &DeclareOptions::default());
    assert_eq!(
        anthropic.tools[2]["input_schema"]["required"],
        json!(["input"])
    );

    let run = |name: &'static str, text: &str| {
        let args = json!({ "input": text });
        let exec = &exec;
        async move { exec.execute(name, args).await }
    };
    let text = |output: Result<ToolOutput, ToolError>| output.unwrap().to_text();
    assert_eq!(
        text(run("agenda", "2026-11-29").await),
        "2026-11-29: standup at 9"
    );
    let refused = run("agenda", "tomorrow").await.unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::InvalidArguments, "{refused}");
    assert_eq!(
        text(run("query", "meetings today").await),
        "ran meetings today"
    );
    assert_eq!(text(run("note", "buy milk").await), "BUY MILK");
}

fn github() -> DynamicTool {
    DynamicTool::new(
        "github.repos.list",
        "Lists the repositories of an owner",
        json!({ "type": "object", "properties": { "owner": { "type": "string" } }, "required": ["owner"], "additionalProperties": false }),
        |args, _| async move {
            Ok(ToolOutput::text(format!(
                "{}/hello-world",
                args["owner"].as_str().unwrap_or_default()
            )))
        },
    )
}

fn tools() -> ExecutorBuilder {
    Executor::builder()
        .service(Arc::new(WeatherService))
        .tool(github())
}

fn executor() -> Executor {
    tools().build().unwrap()
}

fn golden_path(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(relative)
}

/// Compares with the golden file (expect-test: `UPDATE_EXPECT=1` rewrites it).
fn golden(relative: &str, actual: &str) {
    expect_test::expect_file![golden_path(relative)].assert_eq(actual);
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

fn response(format: Format) -> Value {
    let text =
        std::fs::read_to_string(golden_path(&format!("{}/response.json", format.name()))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn declarations_match_the_golden_files() {
    let exec = executor();
    for format in Format::ALL {
        let declared = exec.declarations(format, &DeclareOptions::default());
        golden(
            &format!("{}/declarations.json", format.name()),
            &pretty(&declared.tools),
        );
        assert!(declared.notes.is_empty(), "{:?}", declared.notes);
    }
    for format in [
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
    ] {
        let declared = exec.declarations(
            format,
            &DeclareOptions {
                strict: true,
                ..Default::default()
            },
        );
        golden(
            &format!("{}/declarations.strict.json", format.name()),
            &pretty(&declared.tools),
        );
    }
}

#[test]
fn refused_names_are_declared_under_aliases_except_for_mcp() {
    let exec = executor();
    for format in Format::ALL {
        let declared = exec.declarations(format, &DeclareOptions::default());
        let text = declared.tools.to_string();
        if format == Format::Mcp {
            assert!(text.contains("\"github.repos.list\""), "{format}");
        } else {
            assert!(
                text.contains("\"github_repos_list\"") && !text.contains("github.repos.list"),
                "{format}: {text}"
            );
            assert_eq!(
                declared.aliases.real_name("github_repos_list"),
                "github.repos.list"
            );
        }
    }
}

#[tokio::test]
async fn each_api_round_trips_from_recorded_response_to_result_message() {
    let exec = executor();
    for format in Format::ALL {
        let declared = exec.declarations(format, &DeclareOptions::default());
        let calls = provider::parse_calls(format, &response(format), &declared.aliases).unwrap();
        let lines: String = calls
            .iter()
            .map(|c| serde_json::to_string(c).unwrap() + "\n")
            .collect();
        golden(&format!("{}/calls.jsonl", format.name()), &lines);
        let results = exec.execute_calls(&calls).await;
        let rendered = provider::render_results(format, &results, &declared.aliases);
        golden(
            &format!("{}/results.json", format.name()),
            &pretty(&rendered),
        );
    }
}

#[tokio::test]
async fn a_batch_isolates_failures_and_keeps_call_order() {
    let exec = executor();
    let calls = vec![
        ToolCall::new("1", "get_weather", json!({ "location": "Oslo" })),
        ToolCall::new("2", "no_such_tool", json!({})),
        ToolCall::new("3", "get_weather", json!("{not json")),
        ToolCall::new("4", "top_song", json!({ "sign": "lower" })),
        ToolCall::new("5", "github.repos.list", json!({ "owner": "rust-lang" })),
    ];
    let results = exec.execute_calls(&calls).await;
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r.call.id.as_deref().unwrap())
        .collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5"]);
    assert!(results[0].result.is_ok());
    assert!(matches!(
        results[1].result,
        Err(ToolError::UnknownTool { .. })
    ));
    let bad_json = results[2].result.as_ref().unwrap_err().to_model_text();
    assert!(bad_json.contains("not valid JSON"), "{bad_json}");
    let bad_sign = results[3].result.as_ref().unwrap_err().to_model_text();
    assert!(
        bad_sign.contains("/sign: \"lower\" does not match"),
        "{bad_sign}"
    );
    assert_eq!(
        results[4].result.as_ref().unwrap().to_text(),
        "rust-lang/hello-world"
    );
}

#[tokio::test]
async fn a_strict_models_null_for_an_optional_field_is_accepted_as_absent() {
    let exec = executor();
    let out = exec
        .execute("get_weather", json!({ "location": "Rome", "unit": null }))
        .await
        .unwrap();
    assert_eq!(out.structured.unwrap()["unit"], json!("celsius"));
    // A required field's null is still refused.
    assert!(exec
        .execute("get_weather", json!({ "location": null }))
        .await
        .is_err());
}

/// Every strict declaration is one the provider accepts, for every tool in this binary.
#[test]
fn strict_declarations_obey_their_profiles() {
    let exec = executor();
    for spec in exec.tools() {
        match profile::openai_strict(&spec.parameters) {
            Ok(s) => {
                profile::check_openai_strict(&s).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name))
            }
            Err(e) => panic!("{}: {e}", spec.name),
        }
        let s = profile::anthropic_strict(&spec.parameters).unwrap();
        profile::check_anthropic_strict(&s).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
        let s = profile::gemini(&spec.parameters).unwrap();
        profile::check_gemini(&s).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
    }
    let declared = exec.declarations(
        Format::OpenAiChat,
        &DeclareOptions {
            strict: true,
            ..Default::default()
        },
    );
    for tool in declared.tools.as_array().unwrap() {
        assert_eq!(tool["function"]["strict"], json!(true));
        profile::check_openai_strict(&tool["function"]["parameters"]).unwrap();
    }
}

#[test]
fn an_inexpressible_schema_is_declared_non_strict_with_a_note() {
    let free_form = noop(
        "free",
        "Takes a pair",
        json!({ "type": "object", "properties": { "data": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }] } } }),
    );
    let exec = executor_of([free_form]).unwrap();
    let declared = exec.declarations(
        Format::OpenAiResponses,
        &DeclareOptions {
            strict: true,
            ..Default::default()
        },
    );
    assert_eq!(declared.tools[0]["strict"], json!(false));
    assert_eq!(declared.notes.len(), 1);
    assert!(
        declared.notes[0].contains("`free` is declared non-strict")
            && declared.notes[0].contains("/properties/data"),
        "{:?}",
        declared.notes
    );
}

/// A map of anything and an untyped value stay strict: the map is declared as `{"key",
/// "value"}` pairs, the untyped value as a scalar or JSON text, and the model's call is turned
/// back before the tool sees it.
#[tokio::test]
async fn maps_and_untyped_values_are_declared_strict_and_their_calls_decoded() {
    let poker = DynamicTool::new(
        "deal",
        "Deals cards to players",
        json!({
            "type": "object",
            "properties": {
                "cards": { "type": "object", "description": "Cards by player" },
                "extra": {}
            },
            "required": ["cards"]
        }),
        |args, _| async move { Ok(ToolOutput::json(args)) },
    );
    let exec = executor_of([poker]).unwrap();
    let strict = DeclareOptions {
        strict: true,
        ..Default::default()
    };
    let declared = exec.declarations(Format::Anthropic, &strict);
    assert!(declared.notes.is_empty(), "{:?}", declared.notes);
    let tool = &declared.tools[0];
    assert_eq!(tool["strict"], json!(true));
    profile::check_anthropic_strict(&tool["input_schema"]).unwrap();
    let cards = &tool["input_schema"]["properties"]["cards"];
    assert_eq!(cards["type"], json!("array"));
    assert_eq!(
        cards["items"]["required"],
        json!(["key", "value"]),
        "{cards}"
    );
    let response = json!({ "type": "message", "role": "assistant", "content": [{
        "type": "tool_use", "id": "t1", "name": "deal",
        "input": {
            "cards": [{ "key": "ann", "value": "[\"AS\", \"KD\"]" }, { "key": "bob", "value": 2 }],
            "extra": "{\"seed\": 7}"
        }
    }]});
    let calls = provider::parse_calls(Format::Anthropic, &response, &declared.aliases).unwrap();
    let expected = json!({ "cards": { "ann": ["AS", "KD"], "bob": 2 }, "extra": { "seed": 7 } });
    assert_eq!(calls[0].arguments, expected);
    let out = exec
        .execute("deal", calls[0].arguments.clone())
        .await
        .unwrap();
    assert_eq!(out.structured.unwrap(), expected);

    let declared = exec.declarations(Format::OpenAiChat, &strict);
    assert!(declared.notes.is_empty(), "{:?}", declared.notes);
    assert_eq!(declared.tools[0]["function"]["strict"], json!(true));
    profile::check_openai_strict(&declared.tools[0]["function"]["parameters"]).unwrap();
    let response = json!({ "choices": [{ "message": { "tool_calls": [{
        "id": "c1", "type": "function",
        "function": { "name": "deal", "arguments": "{\"cards\": [{\"key\": \"ann\", \"value\": 1}], \"extra\": null}" }
    }]}}]});
    let calls = provider::parse_calls(Format::OpenAiChat, &response, &declared.aliases).unwrap();
    assert_eq!(
        calls[0].arguments,
        json!({ "cards": { "ann": 1 }, "extra": null })
    );
}

/// An executor of one tool taking `schema`, which does nothing.
fn one_tool(name: &str, description: &str, schema: &Value) -> Executor {
    executor_of([noop(name, description, schema.clone())]).unwrap()
}

#[test]
fn gemini_falls_back_to_full_json_schema_for_a_recursive_schema() {
    let schema = json!({
        "type": "object",
        "properties": { "tree": { "$ref": "#/$defs/Node" } },
        "$defs": { "Node": { "type": "object", "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } } } }
    });
    let exec = one_tool("tree", "Walks a tree", &schema);
    let declared = exec.declarations(Format::Gemini, &DeclareOptions::default());
    let declaration = &declared.tools[0]["functionDeclarations"][0];
    assert_eq!(declaration["parametersJsonSchema"], schema);
    assert!(
        declared.notes[0].contains("recursive"),
        "{:?}",
        declared.notes
    );
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum Op {
    Set {
        values: std::collections::HashMap<String, i32>,
    },
    Raw {
        payload: Value,
    },
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct OpArgs {
    op: Op,
}

#[test]
fn strict_arguments_of_a_tagged_enum_decode_by_their_variant() {
    let schema = ai_tool::schema::canonical_for::<OpArgs>().unwrap();
    for (name, (strict, encoding)) in [
        ("openai", profile::openai_strict_encoded(&schema).unwrap()),
        (
            "anthropic",
            profile::anthropic_strict_encoded(&schema).unwrap(),
        ),
    ] {
        let raw = json!({ "op": { "kind": "Raw", "payload": "[1, 2]" } });
        assert_eq!(
            encoding.decode(raw),
            json!({ "op": { "kind": "Raw", "payload": [1, 2] } }),
            "{name}: {strict}"
        );
        let set = json!({ "op": { "kind": "Set", "values": [{ "key": "a", "value": 1 }] } });
        assert_eq!(
            encoding.decode(set.clone()),
            json!({ "op": { "kind": "Set", "values": { "a": 1 } } }),
            "{name}"
        );
        let canonical = json!({ "op": { "kind": "Raw", "payload": { "x": true } } });
        assert_eq!(
            encoding.encode(canonical.clone()),
            json!({ "op": { "kind": "Raw", "payload": "{\"x\":true}" } }),
            "{name}"
        );
        assert_eq!(
            encoding.decode(encoding.encode(canonical.clone())),
            canonical
        );
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Link {
    v: i32,
    next: Option<Box<Link>>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ChainArgs {
    head: Link,
}

#[test]
fn gemini_falls_back_to_full_json_schema_for_recursion_through_an_option() {
    let schema = ai_tool::schema::canonical_for::<ChainArgs>().unwrap();
    let exec = one_tool("chain", "Walks a chain", &schema);
    let declared = exec.declarations(Format::Gemini, &DeclareOptions::default());
    let declaration = &declared.tools[0]["functionDeclarations"][0];
    assert_eq!(declaration["parametersJsonSchema"], schema, "{declaration}");
    assert!(
        declared.notes[0].contains("recursive"),
        "{:?}",
        declared.notes
    );
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct TreeNode {
    label: String,
    children: Vec<TreeNode>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct TreeArgs {
    root: TreeNode,
}

#[test]
fn anthropic_strict_declares_a_recursive_schema_non_strict_with_a_note() {
    let schema = ai_tool::schema::canonical_for::<TreeArgs>().unwrap();
    let exec = one_tool("tree", "Walks a tree", &schema);
    let strict = DeclareOptions {
        strict: true,
        ..Default::default()
    };
    let declared = exec.declarations(Format::Anthropic, &strict);
    let tool = &declared.tools[0];
    assert!(tool.get("strict").is_none(), "{tool}");
    assert_eq!(tool["input_schema"], schema);
    assert!(
        declared.notes[0].contains("`tree` is declared non-strict")
            && declared.notes[0].contains("recursive"),
        "{:?}",
        declared.notes
    );
    // The checker says so of a recursive schema, as of anything else strict mode refuses.
    let findings = profile::check_anthropic_strict(&schema).unwrap_err();
    assert!(
        findings
            .iter()
            .any(|f| f.to_string().contains("makes the schema recursive")),
        "{findings:?}"
    );
    // OpenAI's strict mode takes recursive schemas.
    let declared = exec.declarations(Format::OpenAiChat, &strict);
    assert_eq!(declared.tools[0]["function"]["strict"], json!(true));
}

#[test]
fn hosted_tools_map_to_providers_and_refuse_clearly() {
    assert_eq!(
        HostedTool::CodeInterpreter
            .declaration(Format::Gemini)
            .unwrap(),
        json!({ "codeExecution": {} })
    );
    let err = HostedTool::WebSearch
        .declaration(Format::Bedrock)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "web search is not hosted by bedrock; it is hosted by: openai-responses, anthropic, gemini"
    );
}

/// One of each typed hosted tool kind.
fn hosted_kinds() -> Vec<HostedTool> {
    vec![
        HostedTool::CodeInterpreter,
        HostedTool::WebSearch,
        HostedTool::FileSearch {
            stores: vec!["vs_1234".into()],
        },
        HostedTool::RemoteMcp {
            label: "deepwiki".into(),
            url: "https://mcp.deepwiki.com/mcp".into(),
        },
        HostedTool::ComputerUse {
            display_width: 1024,
            display_height: 768,
            environment: ComputerEnvironment::Browser,
        },
        HostedTool::TextEditor,
        HostedTool::Bash,
        HostedTool::ImageGeneration,
        HostedTool::UrlContext,
        HostedTool::ToolSearch(SearchBy::Words),
        HostedTool::ToolSearch(SearchBy::Pattern),
        HostedTool::ProgrammaticCalling,
    ]
}

const HOSTING_FORMATS: [Format; 3] = [Format::OpenAiResponses, Format::Anthropic, Format::Gemini];

#[test]
fn hosted_tool_declarations_match_the_golden_files() {
    for format in HOSTING_FORMATS {
        let declared: Vec<Value> = hosted_kinds()
            .iter()
            .filter_map(|tool| tool.declaration(format).ok())
            .collect();
        golden(
            &format!("{}/hosted/declarations.json", format.name()),
            &pretty(&Value::Array(declared)),
        );
    }
}

#[test]
fn every_hosted_kind_is_refused_by_each_api_without_it_naming_those_with_it() {
    let mut lines = String::new();
    for tool in hosted_kinds() {
        for format in Format::ALL {
            match tool.declaration(format) {
                Ok(_) => lines += &format!("{format}: ok\n"),
                Err(err) => {
                    assert_eq!(err.format, format);
                    assert!(!err.hosted_by.contains(&format.name()));
                    lines += &format!("{format}: {err}\n");
                }
            }
        }
    }
    golden("hosted-errors.txt", &lines);
    let err = HostedTool::TextEditor
        .declaration(Format::OpenAiResponses)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the text editor is not hosted by openai-responses; it is hosted by: anthropic"
    );
}

fn hosted_response(format: Format) -> Value {
    let path = golden_path(&format!("{}/hosted/response.json", format.name()));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn hosted_results_are_read_from_each_apis_documented_response() {
    for format in HOSTING_FORMATS {
        let results = provider::parse_hosted_results(format, &hosted_response(format)).unwrap();
        let readable: Vec<Value> = results
            .iter()
            .map(|r| json!({ "tool": r.tool, "id": r.id, "output": r.output }))
            .collect();
        golden(
            &format!("{}/hosted/results.json", format.name()),
            &pretty(&Value::Array(readable)),
        );
    }
    let openai = provider::parse_hosted_results(
        Format::OpenAiResponses,
        &hosted_response(Format::OpenAiResponses),
    )
    .unwrap();
    let tools: Vec<&str> = openai.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(
        tools,
        ["web_search", "code_interpreter", "image_generation"]
    );
    assert!(matches!(
        openai[2].output.content.last(),
        Some(Content::Image { mime_type, .. }) if mime_type == "image/png"
    ));
}

#[test]
fn an_unknown_hosted_item_is_kept_as_its_json_not_dropped() {
    let response = json!({ "output": [
        { "type": "local_shell_call", "id": "lsh_1", "status": "completed", "action": { "command": ["ls"] } }
    ]});
    let results = provider::parse_hosted_results(Format::OpenAiResponses, &response).unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].tool, "local_shell");
    assert!(results[0].output.to_text().contains("\"command\":[\"ls\"]"));
}

#[test]
fn apis_without_hosted_tools_give_no_hosted_results_but_still_refuse_bad_responses() {
    for format in [Format::OpenAiChat, Format::Bedrock, Format::Mcp] {
        assert_eq!(
            provider::parse_hosted_results(format, &response(format)).unwrap(),
            vec![]
        );
    }
    let err =
        provider::parse_hosted_results(Format::Gemini, &response(Format::Anthropic)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "this looks like an Anthropic response, not Gemini"
    );
}

#[test]
fn client_run_hosted_tools_come_back_as_calls_named_as_the_tool() {
    for format in [Format::OpenAiResponses, Format::Anthropic] {
        let calls =
            provider::parse_calls(format, &hosted_response(format), &Default::default()).unwrap();
        let lines: String = calls
            .iter()
            .map(|c| serde_json::to_string(c).unwrap() + "\n")
            .collect();
        golden(&format!("{}/hosted/calls.jsonl", format.name()), &lines);
    }
    let computer = HostedTool::ComputerUse {
        display_width: 1024,
        display_height: 768,
        environment: ComputerEnvironment::Mac,
    };
    let calls = provider::parse_calls(
        Format::Anthropic,
        &hosted_response(Format::Anthropic),
        &Default::default(),
    )
    .unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            computer.call_name().unwrap(),
            HostedTool::Bash.call_name().unwrap(),
            HostedTool::TextEditor.call_name().unwrap()
        ]
    );
    assert_eq!(HostedTool::WebSearch.call_name(), None);
}

#[test]
fn a_computer_calls_screenshot_is_rendered_as_a_computer_call_output() {
    let calls = provider::parse_calls(
        Format::OpenAiResponses,
        &hosted_response(Format::OpenAiResponses),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(calls[0].name, "computer");
    assert_eq!(
        calls[0].arguments["action"],
        json!({ "type": "click", "button": "left", "x": 156, "y": 50 })
    );
    let screenshot = ToolOutput::empty().with_content(Content::Image {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    });
    let results = [CallResult {
        call: calls[0].clone(),
        result: Ok(screenshot),
    }];
    let rendered = provider::render_results(Format::OpenAiResponses, &results, &Default::default());
    golden(
        "openai-responses/hosted/results-rendered.json",
        &pretty(&rendered),
    );
    assert_eq!(rendered[0]["type"], "computer_call_output");
    assert_eq!(
        rendered[0]["output"]["image_url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
}

#[test]
fn pending_safety_checks_are_acknowledged_only_when_the_tool_returns_them() {
    let check = json!({ "id": "cu_sc_1", "code": "malicious_instructions", "message": "Careful." });
    let call = ToolCall::new(
        "call_1",
        "computer",
        json!({ "action": { "type": "screenshot" }, "pending_safety_checks": [check] }),
    );
    let image = Content::Image {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    };
    let render = |output: ToolOutput| {
        let results = [CallResult {
            call: call.clone(),
            result: Ok(output),
        }];
        provider::render_results(Format::OpenAiResponses, &results, &Default::default())
    };
    let silent = render(ToolOutput::empty().with_content(image.clone()));
    assert_eq!(silent[0]["type"], "computer_call_output");
    assert!(
        silent[0].get("acknowledged_safety_checks").is_none(),
        "never acknowledged by default: {silent}"
    );
    let acknowledged = render(
        ToolOutput::json(json!({ "acknowledged_safety_checks": [check] })).with_content(image),
    );
    assert_eq!(
        acknowledged[0]["acknowledged_safety_checks"],
        json!([check]),
        "{acknowledged}"
    );
}

#[test]
fn a_function_tool_of_your_own_named_computer_is_answered_as_a_function() {
    let call = ToolCall::new(
        "call_2",
        "computer",
        json!({ "action": { "verb": "boot" } }),
    );
    let results = [CallResult {
        call,
        result: Ok(ToolOutput::empty().with_content(Content::Image {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        })),
    }];
    let rendered = provider::render_results(Format::OpenAiResponses, &results, &Default::default());
    assert_eq!(rendered[0]["type"], "function_call_output", "{rendered}");
    assert_eq!(rendered[0]["call_id"], "call_2");
    // A function's images go with its text, as input images (no empty text before them).
    assert_eq!(
        rendered[0]["output"],
        json!([
            { "type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=" }
        ])
    );
}

// ---- generated schemas: checkers and preservation of valid instances ----

/// A schema of the kind the macros generate: closed objects, typed properties, constraints.
fn generated_schema(rng: &mut Rng, depth: u32) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for i in 0..1 + rng.below(4) {
        let name = format!("p{i}");
        let kinds: &[usize] = if depth == 0 {
            &[0, 1, 2, 3, 4, 7, 8, 9]
        } else {
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        };
        let mut prop = match rng.pick(kinds) {
            0 => {
                json!({ "type": "string", "minLength": rng.below(3), "maxLength": 3 + rng.below(5) })
            }
            1 => json!({ "type": "integer", "minimum": 0, "maximum": 100 + rng.below(100) }),
            2 => json!({ "type": "number", "exclusiveMinimum": 0.5 }),
            3 => json!({ "enum": ["a", "b", "c"] }),
            4 => json!({ "type": "boolean", "default": true }),
            5 => {
                json!({ "type": "array", "items": generated_schema(rng, depth - 1), "minItems": rng.below(3), "maxItems": 4, "uniqueItems": rng.chance(30) })
            }
            6 => generated_schema(rng, depth - 1),
            // An open object: a map of anything (`HashMap<String, Value>`, a catalog's
            // `{"type": "object"}`).
            7 => json!({ "type": "object" }),
            // An untyped value: anything at all.
            8 => json!({ "description": "Anything" }),
            // A map of typed values.
            _ => {
                json!({ "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } })
            }
        };
        if rng.chance(30) {
            if let Some(Value::String(t)) = prop.get("type").cloned() {
                prop["type"] = json!([t, "null"]);
            }
        }
        if rng.chance(20) {
            prop["description"] = json!("A generated property");
        }
        if rng.chance(60) {
            required.push(name.clone());
        }
        properties.insert(name, prop);
    }
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// Any JSON value, nested up to `depth` levels.
fn any_value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth == 0 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!(rng.below(1000) as i64 - 500),
        3 => json!(rng.below(100) as f64 / 8.0),
        4 => json!(["", "a", "[1]", "{\"k\": 2}", "key value"][rng.below(5)]),
        5 => Value::Array(
            (0..rng.below(4))
                .map(|_| any_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|i| (format!("k{i}"), any_value(rng, depth - 1)))
                .collect(),
        ),
    }
}

/// Instances that use only declared properties (and any keys where the schema allows them),
/// valid or not under the schema.
fn instance_for(rng: &mut Rng, schema: &Value) -> Value {
    let open = schema.get("type") == Some(&json!("object"))
        && schema.get("properties").is_none()
        && schema.get("additionalProperties") != Some(&json!(false));
    if open {
        let values = schema.get("additionalProperties");
        return Value::Object(
            (0..rng.below(4))
                .map(|i| {
                    let value = match values {
                        Some(sub) => instance_for(rng, sub),
                        None => any_value(rng, 2),
                    };
                    (["a", "key", "value", "x y"][i].to_owned(), value)
                })
                .collect(),
        );
    }
    if ["type", "enum", "anyOf", "$ref", "const"]
        .iter()
        .all(|k| schema.get(*k).is_none())
    {
        return any_value(rng, 2);
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let mut map = Map::new();
        for (name, sub) in props {
            if rng.chance(80) {
                map.insert(name.clone(), instance_for(rng, sub));
            }
        }
        return Value::Object(map);
    }
    if rng.chance(10) {
        return Value::Null;
    }
    let types: Vec<String> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().map(|t| t.as_str().unwrap().to_owned()).collect(),
        _ => vec!["string".into()],
    };
    match types[0].as_str() {
        "string" if schema.get("enum").is_some() => json!(["a", "b", "c", "d"][rng.below(4)]),
        "string" => json!("xyzxyzxyz"[..rng.below(9)].to_owned()),
        "integer" => json!(rng.below(250) as i64 - 20),
        "number" => json!(rng.below(10) as f64 / 2.0),
        "boolean" => json!(rng.chance(50)),
        "array" => Value::Array(
            (0..rng.below(5))
                .map(|_| instance_for(rng, &schema["items"]))
                .collect(),
        ),
        _ => Value::Null,
    }
}

/// What a strict-mode model sends: every optional property present, `null` when absent.
fn fill_nulls(schema: &Value, instance: &mut Value) {
    if let (Some(props), Value::Object(map)) = (
        schema.get("properties").and_then(Value::as_object),
        &mut *instance,
    ) {
        for (name, sub) in props {
            let value = map.entry(name.clone()).or_insert(Value::Null);
            fill_nulls(sub, value);
        }
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), instance) {
        values.iter_mut().for_each(|v| fill_nulls(items, v));
    }
}

/// Gemini's `nullable: true` read as JSON Schema, so a JSON Schema validator can check it.
fn gemini_as_json_schema(schema: &mut Value) {
    if let Value::Object(map) = schema {
        if map.remove("nullable") == Some(json!(true)) {
            match map.get("type").cloned() {
                Some(Value::String(t)) => {
                    map.insert("type".into(), json!([t, "null"]));
                }
                _ => {
                    let inner = Value::Object(std::mem::take(map));
                    map.insert("anyOf".into(), json!([inner, { "type": "null" }]));
                }
            }
        }
        for value in map.values_mut() {
            gemini_as_json_schema(value);
        }
    } else if let Value::Array(items) = schema {
        items.iter_mut().for_each(gemini_as_json_schema);
    }
}

/// Maps and untyped values stay strict through an encoding (pairs, JSON text): a valid
/// instance, encoded, is valid under the strict schema, and decodes back to itself.
#[test]
fn profiles_of_generated_schemas_obey_their_rules_and_keep_valid_instances_valid() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    let (mut checked, mut encoded_places) = (0, 0);
    for _ in 0..300 {
        let canonical = generated_schema(&mut rng, 2);
        let reference = jsonschema::validator_for(&canonical).unwrap();
        let (openai, openai_encoding) = profile::openai_strict_encoded(&canonical)
            .unwrap_or_else(|e| panic!("{canonical}\n{e}"));
        profile::check_openai_strict(&openai).unwrap_or_else(|e| panic!("{canonical}\n{e:?}"));
        let (anthropic, anthropic_encoding) = profile::anthropic_strict_encoded(&canonical)
            .unwrap_or_else(|e| panic!("{canonical}\n{e}"));
        profile::check_anthropic_strict(&anthropic)
            .unwrap_or_else(|e| panic!("{canonical}\n{e:?}"));
        // A schema Gemini's subset cannot say is declared with `parametersJsonSchema`, as it is.
        let gemini = profile::gemini(&canonical).ok();
        if let Some(gemini) = &gemini {
            profile::check_gemini(gemini).unwrap_or_else(|e| panic!("{canonical}\n{e:?}"));
        }
        if !openai_encoding.is_identity() {
            encoded_places += 1;
        }

        let openai_v = jsonschema::validator_for(&openai).unwrap();
        let anthropic_v = jsonschema::validator_for(&anthropic).unwrap();
        let gemini_v = gemini.map(|mut gemini| {
            gemini_as_json_schema(&mut gemini);
            (jsonschema::validator_for(&gemini).unwrap(), gemini)
        });
        for _ in 0..30 {
            let instance = instance_for(&mut rng, &canonical);
            if !reference.is_valid(&instance) {
                continue;
            }
            checked += 1;
            let mut strict_instance = instance.clone();
            fill_nulls(&canonical, &mut strict_instance);
            let sent = openai_encoding.encode(strict_instance.clone());
            assert!(
                openai_v.is_valid(&sent),
                "openai-strict lost {strict_instance}, sent as {sent}\n{openai}"
            );
            assert_eq!(openai_encoding.decode(sent), strict_instance, "{openai}");
            let sent = anthropic_encoding.encode(instance.clone());
            assert!(
                anthropic_v.is_valid(&sent),
                "anthropic-strict lost {instance}, sent as {sent}\n{anthropic}"
            );
            assert_eq!(anthropic_encoding.decode(sent), instance, "{anthropic}");
            if let Some((gemini_v, gemini_js)) = &gemini_v {
                assert!(
                    gemini_v.is_valid(&instance),
                    "gemini lost {instance}\n{gemini_js}"
                );
            }
        }
    }
    assert!(
        checked > 500,
        "only {checked} valid instances were generated"
    );
    assert!(
        encoded_places > 100,
        "only {encoded_places} schemas had a map or an untyped value"
    );
}

/// The SDKs `scripts/sdk-tools.sh` installs (`AI_TOOL_SDK_TOOLS`, else `target/sdk-tools`):
/// `None`, with a note, only when neither is there; when the variable is set they must be.
fn sdk_python(test: &str) -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("AI_TOOL_SDK_TOOLS") {
        let python = Path::new(&dir).join("python");
        assert!(
            python.is_dir(),
            "AI_TOOL_SDK_TOOLS has no python/: run scripts/sdk-tools.sh"
        );
        return Some(python);
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/sdk-tools/python");
    if default.is_dir() {
        return Some(default);
    }
    eprintln!("note: {test} skipped: AI_TOOL_SDK_TOOLS is unset and target/sdk-tools is absent");
    None
}

/// Anthropic's own SDK, given a schema we declare strict, gives it back unchanged (up to its
/// edits of form: `type` dropped beside `enum`, `properties: {}` on closed objects): it says
/// nothing we left out, and refuses nothing we send (a list of type names, which it cannot
/// read, was how nullable and untyped values were written). Over generated schemas with
/// untyped values, maps, unions and nullable values, the executor's tools, and a recursive
/// schema, which must be declared non-strict instead.
#[test]
fn anthropics_sdk_gives_our_strict_schemas_back_unchanged() {
    let Some(python) = sdk_python("anthropics_sdk_gives_our_strict_schemas_back_unchanged") else {
        return;
    };
    let mut rng = Rng(0x5eed_a11c_0ffe_e123);
    let mut canonical: Vec<Value> = (0..300).map(|_| generated_schema(&mut rng, 2)).collect();
    canonical.extend(executor().tools().map(|spec| spec.parameters.clone()));
    canonical.push(json!({
        "type": "object",
        "properties": {
            "either": { "anyOf": [{ "type": "string" }, { "type": "integer", "minimum": 1 }] },
            "maybe_list": { "type": ["array", "null"], "items": { "type": "string" }, "minItems": 1 },
            "maybe_object": {
                "type": ["object", "null"],
                "properties": { "a": { "type": ["string", "null"], "format": "date" } },
                "required": ["a"]
            },
            "anything": {},
            "tags": { "type": "object", "additionalProperties": { "type": ["string", "null"] } },
            "kind": { "type": ["string", "null"], "enum": ["a", "b", null] }
        },
        "required": ["either"]
    }));
    let strict: Vec<Value> = canonical
        .iter()
        .map(|schema| profile::anthropic_strict(schema).unwrap_or_else(|e| panic!("{schema}\n{e}")))
        .collect();
    for schema in &strict {
        profile::check_anthropic_strict(schema).unwrap_or_else(|e| panic!("{schema}\n{e:?}"));
    }
    let recursive = json!({
        "type": "object",
        "properties": { "next": { "$ref": "#/$defs/Node" } },
        "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } }
    });
    assert!(
        profile::anthropic_strict(&recursive).is_err(),
        "a recursive schema is not strict"
    );

    let file = common::TempFile::new("anthropic-strict.json");
    std::fs::write(file.path(), serde_json::to_vec(&strict).unwrap()).unwrap();
    let output = std::process::Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/anthropic_transform.py"))
        .arg(file.path())
        .env("PYTHONPATH", &python)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let changed: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    if let Some(first) = changed.first() {
        let index = first["index"].as_u64().unwrap() as usize;
        panic!(
            "{} of {} strict schemas are changed by the SDK; the first:\ncanonical: {}\nours: {}\nthe SDK's: {}",
            changed.len(),
            strict.len(),
            canonical[index],
            strict[index],
            first
        );
    }
}

#[test]
fn the_openai_strict_profile_refuses_a_nullable_root() {
    let err = profile::openai_strict(&json!({ "type": ["object", "null"], "properties": {} }))
        .unwrap_err();
    assert!(matches!(err, ProfileError::Inexpressible { .. }));
}

// ---- the command line ----

/// `ai-tool ARGS...` with the tools here.
#[cfg(feature = "cli")]
fn cli(args: &[&str]) -> (u8, String, String) {
    common::cli::run(tools(), args)
}

#[cfg(feature = "cli")]
#[test]
fn cli_prints_declarations_calls_and_results_as_the_golden_files() {
    for format in Format::ALL {
        let (code, out, err) = cli(&["tools", "--format", format.name()]);
        assert_eq!((code, err.as_str()), (0, ""));
        golden(&format!("{}/declarations.json", format.name()), &out);
        let response = golden_path(&format!("{}/response.json", format.name()));
        let (code, out, _) = cli(&[
            "parse-calls",
            "--format",
            format.name(),
            response.to_str().unwrap(),
        ]);
        assert_eq!(code, 0);
        golden(&format!("{}/calls.jsonl", format.name()), &out);
        let (code, out, _) = cli(&[
            "run-calls",
            "--format",
            format.name(),
            response.to_str().unwrap(),
        ]);
        assert_eq!(code, 0);
        golden(&format!("{}/results.json", format.name()), &out);
    }
    let (code, out, _) = cli(&["tools", "--format", "anthropic", "--strict"]);
    assert_eq!(code, 0);
    golden("anthropic/declarations.strict.json", &out);
}

#[cfg(feature = "cli")]
#[test]
fn cli_refuses_unknown_formats_and_bad_responses_in_one_line() {
    let (code, _, err) = cli(&["tools", "--format", "cohere"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown format `cohere`"), "{err}");
    let bad = common::TempFile::with_lines("bad-response.json", &["[1, 2]"]);
    let (code, _, err) = cli(&["parse-calls", "--format", "gemini", bad.arg()]);
    assert_eq!(
        (code, err.trim_end()),
        (
            2,
            format!(
                "error: {}: not a Gemini response: the response must be a JSON object",
                bad.path().display()
            )
            .as_str()
        )
    );
}

#[cfg(feature = "cli")]
#[test]
fn run_calls_on_another_apis_response_or_an_error_object_fails_naming_it() {
    let chat = golden_path("openai-chat/response.json");
    let (code, out, err) = cli(&["run-calls", "--format", "anthropic", chat.to_str().unwrap()]);
    assert_eq!(
        (code, out.as_str(), err.trim_end()),
        (
            2,
            "",
            format!(
                "error: {}: this looks like an OpenAI Chat response, not Anthropic",
                chat.display()
            )
            .as_str()
        )
    );
    let error = common::TempFile::with_lines(
        "error-response.json",
        &[
            r#"{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}"#,
        ],
    );
    let (code, _, err) = cli(&["parse-calls", "--format", "openai-chat", error.arg()]);
    assert_eq!(code, 2);
    assert!(
        err.trim_end()
            .ends_with(": an OpenAI error: Rate limit reached"),
        "{err}"
    );
}
