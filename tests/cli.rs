//! The `ai-tool` command line, through `cli::run_with` and through the real binary.
#![cfg(feature = "cli")]

use std::process::Command;

mod common;

use ai_tool::prelude::*;
use serde_json::Value;

use common::TempFile;

/// Shouts the text.
#[ai_tool]
fn shout(text: String) -> String {
    text.to_uppercase()
}

/// Always fails.
#[ai_tool]
fn refuse() -> Result<String, String> {
    Err("not today".into())
}

fn fixture(name: &str, lines: &[&str]) -> TempFile {
    TempFile::with_lines(name, lines)
}

fn catalog() -> TempFile {
    fixture(
        "catalog.jsonl",
        &[
            r#"{"name":"weather.get","description":"Gets the weather\nfor a city","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":2}},"required":["city"]}}"#,
            r#"{"type":"function","function":{"name":"sum","description":"Adds","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}"#,
        ],
    )
}

/// `ai-tool ARGS...` with this binary's tools.
fn run(args: &[&str]) -> (u8, String, String) {
    common::cli::run(Executor::builder(), args)
}

#[test]
fn tools_lists_compiled_in_and_catalog_tools_with_first_description_line() {
    let catalog = catalog();
    let (code, out, _) = run(&["tools", "--catalog", catalog.arg()]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "refuse       Always fails.",
            "shout        Shouts the text.",
            "weather.get  Gets the weather",
            "sum          Adds"
        ]
    );
}

#[test]
fn tools_json_prints_the_full_specs() {
    let (code, out, _) = run(&["tools", "--json"]);
    assert_eq!(code, 0);
    let specs: Vec<ToolSpec> = serde_json::from_str(&out).unwrap();
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[1].parameters["required"], serde_json::json!(["text"]));
}

#[test]
fn call_prints_the_output() {
    let (code, out, err) = run(&["call", "shout", r#"{"text":"hey"}"#]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "HEY\n", ""));
}

#[test]
fn call_of_a_failing_tool_exits_1_with_one_line() {
    let (code, out, err) = run(&["call", "refuse", "{}"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (1, "", "error: tool `refuse` failed: not today\n")
    );
}

#[test]
fn call_with_bad_input_exits_2_with_one_line() {
    let (code, _, err) = run(&["call", "shuot", "{}"]);
    assert_eq!(
        (code, err.as_str()),
        (2, "error: unknown tool `shuot`; did you mean shout?\n")
    );
    let (code, _, err) = run(&["call", "shout", "{nope"]);
    assert!(
        code == 2
            && err.starts_with("error: ARGS_JSON is not valid JSON")
            && err.lines().count() == 1,
        "{err}"
    );
    let (code, _, err) = run(&["call", "shout", "{}"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "error: invalid arguments for `shout`: /: \"text\" is a required property\n"
        )
    );
    let catalog = catalog();
    let (code, _, err) = run(&["call", "sum", r#"{"a":1}"#, "--catalog", catalog.arg()]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "error: tool `sum` is declared but has no implementation in this executor\n"
        ),
        "a tool that is only declared is bad input, not a failure of the tool"
    );
}

#[test]
fn validate_prints_a_verdict_per_call_and_a_total() {
    let catalog = catalog();
    let calls = fixture(
        "calls.jsonl",
        &[
            r#"{"id":"c1","tool":"weather.get","args":{"city":"Paris"},"model":"ignored"}"#,
            r#"{"tool":"weather.get","args":{"city":"P"}}"#,
            "",
            r#"{"id":3,"tool":"wether.get","args":{}}"#,
        ],
    );
    let (code, out, err) = run(&[
        "validate",
        "--catalog",
        catalog.arg(),
        "--calls",
        calls.arg(),
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"id":"c1","tool":"weather.get","valid":true,"errors":[]}"#
    );
    assert_eq!(
        lines[1],
        r#"{"id":null,"tool":"weather.get","valid":false,"errors":["/city: \"P\" is shorter than 2 characters"]}"#
    );
    let third: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(third["valid"], Value::Bool(false));
    assert!(third["errors"][0]
        .as_str()
        .unwrap()
        .contains("did you mean weather.get"));
    assert_eq!(lines[3], "1 valid, 2 invalid");
}

#[test]
fn validate_with_unusable_input_names_file_and_line() {
    let catalog = catalog();
    let calls = fixture(
        "bad-calls.jsonl",
        &[r#"{"tool":"sum","args":{}}"#, "{broken"],
    );
    let (code, _, err) = run(&[
        "validate",
        "--catalog",
        catalog.arg(),
        "--calls",
        calls.arg(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(&format!(
            "error: {}:2: malformed JSON",
            calls.path().display()
        )),
        "{err}"
    );
    let no_tool = fixture("no-tool.jsonl", &[r#"{"args":{}}"#]);
    let (code, _, err) = run(&[
        "validate",
        "--catalog",
        catalog.arg(),
        "--calls",
        no_tool.arg(),
    ]);
    assert_eq!(
        (code, err.trim_end()),
        (
            2,
            format!(
                "error: {}:1: a call needs a string `tool`",
                no_tool.path().display()
            )
            .as_str()
        )
    );
    let (code, _, err) = run(&[
        "validate",
        "--catalog",
        "/missing.jsonl",
        "--calls",
        calls.arg(),
    ]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "error: /missing.jsonl: cannot read: No such file or directory (os error 2)\n"
        )
    );
}

#[test]
fn a_catalog_tool_that_is_already_compiled_in_is_refused() {
    let clash = fixture(
        "clash.jsonl",
        &[r#"{"name":"shout","description":"again"}"#],
    );
    let (code, _, err) = run(&["tools", "--catalog", clash.arg()]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: two tools are named `shout`: one in cli (tests/cli.rs:")
            && err.contains("clash.jsonl:1; rename one")
            && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn the_binary_reports_bad_flags_without_panicking() {
    let bin = env!("CARGO_BIN_EXE_ai-tool");
    let output = Command::new(bin).arg("frobnicate").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unrecognized subcommand"));
    let output = Command::new(bin)
        .args(["tools", "--catalog", "/no/file.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: /no/file.jsonl: cannot read: No such file or directory (os error 2)\n"
    );
    let output = Command::new(bin).arg("--help").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn validate_checks_compiled_in_tools_without_a_catalog() {
    let calls = fixture(
        "compiled-calls.jsonl",
        &[
            r#"{"id":1,"tool":"shout","args":{"text":"hey"}}"#,
            r#"{"id":2,"tool":"shout","args":{}}"#,
        ],
    );
    let (code, out, err) = run(&["validate", "--calls", calls.arg()]);
    assert_eq!((code, err.as_str()), (0, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"id":1,"tool":"shout","valid":true,"errors":[]}"#,
            r#"{"id":2,"tool":"shout","valid":false,"errors":["/: \"text\" is a required property"]}"#,
            "1 valid, 1 invalid",
        ]
    );
}

#[test]
fn a_catalog_with_a_byte_order_mark_is_read() {
    let with_bom = fixture(
        "bom.jsonl",
        &[
            "\u{feff}{\"name\":\"sum\",\"description\":\"Adds\",\"parameters\":{\"type\":\"object\"}}",
        ],
    );
    let (code, out, err) = run(&["tools", "--catalog", with_bom.arg()]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.lines().any(|l| l.starts_with("sum ")), "{out}");
}

#[test]
fn tools_in_a_binary_without_tools_says_there_are_none() {
    let bin = env!("CARGO_BIN_EXE_ai-tool");
    let output = Command::new(bin).arg("tools").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "no tools: this program has no compiled-in tools, and no --catalog FILE was given\n"
    );
}

#[tokio::test]
async fn run_with_works_inside_an_async_runtime() {
    let (code, out, err) = run(&["call", "shout", r#"{"text":"inside"}"#]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "INSIDE\n", ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_with_async_runs_on_the_callers_runtime() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = ["ai-tool", "call", "shout", r#"{"text":"async"}"#];
    let code = ai_tool::cli::run_with_async(argv, Executor::builder(), &mut out, &mut err).await;
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    assert_eq!(String::from_utf8(out).unwrap(), "ASYNC\n");
}

#[test]
fn parse_calls_with_strict_decodes_what_a_strict_declaration_encoded() {
    let catalog = fixture(
        "poker.jsonl",
        &[
            r#"{"name":"deal","description":"Deals cards","parameters":{"type":"object","properties":{"cards":{"type":"object"}},"required":["cards"]}}"#,
        ],
    );
    let (code, declared, _) = run(&[
        "tools",
        "--format",
        "openai-chat",
        "--strict",
        "--catalog",
        catalog.arg(),
    ]);
    assert_eq!(code, 0);
    let declared: Value = serde_json::from_str(&declared).unwrap();
    assert_eq!(
        declared[0]["function"]["strict"],
        Value::Bool(true),
        "{declared}"
    );
    let arguments = r#"{\"cards\":[{\"key\":\"ada\",\"value\":\"AS\"}]}"#;
    let response = fixture(
        "strict-response.json",
        &[&format!(
            r#"{{"choices":[{{"message":{{"role":"assistant","tool_calls":[{{"id":"c1","type":"function","function":{{"name":"deal","arguments":"{arguments}"}}}}]}}}}]}}"#
        )],
    );
    let args = |out: &str| -> Value {
        let call: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        call["arguments"].clone()
    };
    let parse = [
        "parse-calls",
        "--format",
        "openai-chat",
        "--catalog",
        catalog.arg(),
    ];
    let (code, out, err) = run(&[&parse[..], &["--strict", response.arg()]].concat());
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(args(&out), serde_json::json!({ "cards": { "ada": "AS" } }));
    let (code, out, _) = run(&[&parse[..], &[response.arg()]].concat());
    assert_eq!(code, 0);
    assert_eq!(
        args(&out),
        serde_json::json!({ "cards": [{ "key": "ada", "value": "AS" }] }),
        "without --strict, the arguments are read as sent"
    );
}

/// Serving every tool to other machines without authentication is refused before anything is
/// bound, naming the two ways out.
#[test]
fn serve_on_an_address_beyond_loopback_without_a_token_is_refused() {
    let (code, out, err) = run(&["serve", "--http", "0.0.0.0:0"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("refusing to serve MCP on 0.0.0.0:0 without authentication")
            && err.contains("--token-env")
            && err.contains("--no-auth"),
        "{err}"
    );
}

/// A header's value may be a secret: a malformed `--header` is refused without showing it, and
/// an unreachable server's URL is shown without its credentials or query.
#[test]
fn the_cli_shows_no_header_value_or_url_credentials() {
    let (code, _, err) = run(&[
        "call",
        "x",
        "{}",
        "--mcp-http",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Bearer sk-very-secret",
    ]);
    assert_eq!(code, 2);
    assert!(!err.contains("sk-very-secret"), "{err}");
    let (code, _, err) = run(&[
        "call",
        "x",
        "{}",
        "--mcp-http",
        "http://user:pw-secret@127.0.0.1:9/mcp?key=q-secret",
        "--timeout",
        "5",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("127.0.0.1:9/mcp"), "{err}");
    assert!(!err.contains("secret"), "{err}");
}
