//! `ai-tool route` and `ai-tool tools --tools`, through the real binary, against a mock
//! OpenAI-compatible server on 127.0.0.1 that scores each tool from the request's
//! `response_format` name.
#![cfg(all(feature = "cli", feature = "agent"))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod common;

use serde_json::{json, Value};

use common::TempFile;

const TOOLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tools.xml");

/// The answer the mock model gives for a tool's evaluation.
fn answer_for(tool: &str) -> Value {
    match tool {
        "accompaniment" => json!({ "score": 91, "search_query": "wine", "main_item": "pear tart" }),
        "search" => json!({ "score": "60", "search_query": "pear tart wine" }),
        "details" => json!({ "score": 20 }),
        _ => json!({ "score": 5 }),
    }
}

/// Serves Chat Completions on 127.0.0.1 until the test ends; counts requests.
fn mock_server() -> (String, Arc<AtomicUsize>) {
    serving(200)
}

/// A server answering every request with this status (200: the scores of `answer_for`).
fn serving(status: u16) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || serve(stream, &counter, status));
        }
    });
    (url, count)
}

/// Answers the requests of one connection (keep-alive) until the client closes it.
fn serve(stream: TcpStream, count: &AtomicUsize, status: u16) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        let mut first = true;
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if first {
                assert!(line.starts_with("POST /v1/chat/completions "), "{line}");
                first = false;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        count.fetch_add(1, Ordering::SeqCst);
        let request: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(request["temperature"], 0.0);
        assert_eq!(request["model"], "test-model");
        let format = &request["response_format"];
        assert_eq!(format["type"], "json_schema");
        let name = format["json_schema"]["name"].as_str().unwrap();
        let tool = name.trim_end_matches("_answer");
        let content = answer_for(tool).to_string();
        let refusal = json!({ "error": { "message": "Incorrect API key provided", "type": "invalid_request_error" } });
        let response = if status != 200 {
            refusal
        } else {
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
                "choices": [{ "index": 0, "finish_reason": "stop",
                              "message": { "role": "assistant", "content": content } }],
                "usage": { "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110 }
            })
        }
        .to_string();
        let head = format!(
            "HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            response.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(response.as_bytes()).is_err()
        {
            return;
        }
    }
}

fn ai_tool(args: &[&str], base_url: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ai-tool"));
    command
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("AI_TOOL_MODEL", "test-model");
    if let Some(url) = base_url {
        command.env("OPENAI_BASE_URL", url);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn route_prints_one_json_object_with_the_winner_and_every_candidate() {
    let (url, count) = mock_server();
    let query = "Which wine goes with a pear tart?";
    let output = ai_tool(
        &[
            "route", "--tools", TOOLS, "--type", "Recipe", "--json", query,
        ],
        Some(&url),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["tool"], "accompaniment");
    assert_eq!(printed["score"], 91);
    assert_eq!(
        printed["params"],
        json!({ "search_query": "wine", "main_item": "pear tart" })
    );
    let candidates = printed["candidates"].as_array().unwrap();
    let names: Vec<&str> = candidates
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    // Recipe's tools, its own `search` overriding Thing's; the disabled one never offered.
    assert_eq!(
        names,
        [
            "search",
            "details",
            "compare",
            "ensemble",
            "substitution",
            "accompaniment"
        ]
    );
    assert_eq!(candidates[0]["score"], 60);
    assert_eq!(candidates[0]["error"], Value::Null);
    assert_eq!(count.load(Ordering::SeqCst), 6);
}

#[test]
fn route_prints_the_scores_and_falls_back_below_the_threshold() {
    let (url, _count) = mock_server();
    let output = ai_tool(
        &[
            "route",
            "--tools",
            TOOLS,
            "--type",
            "Recipe",
            "--threshold",
            "95",
            "--fallback",
            "search",
            "pear tart",
        ],
        Some(&url),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains(" 91  accompaniment  (Recipe)"), "{stdout}");
    assert!(
        stdout.ends_with("=> search (60, fallback) {\"search_query\":\"pear tart wine\"}\n"),
        "{stdout}"
    );
}

#[test]
fn route_without_a_model_or_with_a_bad_file_exits_with_2() {
    let output = ai_tool(&["route", "--tools", TOOLS, "q"], None);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("set OPENAI_BASE_URL"),
        "{}",
        text(&output.stderr)
    );

    let bad = TempFile::with_lines(
        "tools.xml",
        &[
            "<Tools>",
            "  <Thing>",
            "    <Tool name=\"a\" enabled=\"perhaps\"><prompt>p</prompt></Tool>",
            "  </Thing>",
            "</Tools>",
        ],
    );
    let output = ai_tool(
        &["route", "--tools", bad.arg(), "q"],
        Some("http://127.0.0.1:9/v1"),
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr,
        format!(
            "error: {}:3: <Tool name=\"a\">: `enabled` is \"perhaps\": write \"true\" or \"false\"\n",
            bad.path().display()
        )
    );
}

#[test]
fn route_fails_when_the_model_answered_no_evaluation() {
    let (url, count) = serving(401);
    let output = ai_tool(
        &["route", "--tools", TOOLS, "--type", "Recipe", "q"],
        Some(&url),
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        count.load(Ordering::SeqCst) > 1,
        "every candidate was asked"
    );
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("error: the model answered none of the evaluations: the model failed:"),
        "{stderr}"
    );
    assert!(stderr.contains("Incorrect API key provided"), "{stderr}");
    // The candidates are printed all the same, each with its error.
    assert!(text(&output.stdout).contains("=> no match"));
}

#[test]
fn tools_lists_the_declared_tools() {
    let output = ai_tool(&["tools", "--tools", TOOLS], None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{stdout}");
    assert_eq!(lines[0], "Thing/search          -> search_recipes");
    assert_eq!(lines[7], "Recipe/nutrition      -> nutrition  (disabled)");
    let json = ai_tool(&["tools", "--tools", TOOLS, "--json"], None);
    let declared: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(declared["site"], "recipes.example");
    assert_eq!(declared["tools"][6]["name"], "accompaniment");
    assert_eq!(declared["tools"][6]["handler"], "pair_with");
}

/// Two nested entities in 104 KB would expand to about 25 GB: the DOCTYPE is refused at once,
/// naming its line.
#[test]
fn tools_refuses_an_entity_bomb_at_once_naming_the_doctype_line() {
    let a = "x".repeat(100_000);
    let b = "&a;".repeat(255);
    let prompt = "&b;".repeat(1_000);
    let xml = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE Tools [\n<!ENTITY a \"{a}\">\n<!ENTITY b \"{b}\">\n]>\n\
         <Tools><Thing><Tool name=\"t\"><prompt>{prompt}</prompt></Tool></Thing></Tools>\n"
    );
    let bomb = TempFile::new("bomb.xml");
    std::fs::write(bomb.path(), xml).unwrap();
    let output = ai_tool(&["tools", "--tools", bomb.arg()], None);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!("{}:2:1: malformed XML", bomb.path().display()))
            && stderr.contains("<!DOCTYPE> that declares entities or elements is not accepted"),
        "{stderr}"
    );
}

/// A file over the 4 MiB default is refused before it is parsed, naming the setting.
#[test]
fn tools_refuses_a_file_over_4_mib_naming_the_limit() {
    let big = TempFile::new("big.xml");
    let filler = format!("<!-- {} -->\n", "y".repeat(1 << 20));
    let xml = format!(
        "<Tools>{}<Thing><Tool name=\"t\"><prompt>p</prompt></Tool></Thing></Tools>",
        filler.repeat(5)
    );
    std::fs::write(big.path(), xml).unwrap();
    let output = ai_tool(&["tools", "--tools", big.arg()], None);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("more than 4194304 bytes") && stderr.contains("ToolsFileLimits::bytes"),
        "{stderr}"
    );
}
