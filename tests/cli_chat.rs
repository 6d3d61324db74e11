//! `ai-tool chat`, against a mock OpenAI-compatible server on 127.0.0.1 that streams its
//! answers: in this process (`cli::run_with`, with this test's tools), and through the real
//! binary over the official Python SDK's MCP server, its approval prompt answered in a
//! pseudo-terminal (Python's `pty`) or refused without one.
#![cfg(all(feature = "cli", feature = "agent"))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;

use ai_tool::prelude::*;
use serde_json::{json, Value};

/// Shouts the text.
#[ai_tool]
fn shout(text: String) -> String {
    text.to_uppercase()
}

/// The chunks the mock streams for request `n` (from 0), given its body.
type Script = Arc<dyn Fn(usize, &Value) -> Vec<Value> + Send + Sync>;

/// Serves Chat Completions on 127.0.0.1 until the test ends, streaming what `script` says;
/// keeps every request's body. An empty script answer hangs the request.
fn mock(script: Script) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (script, seen) = (Arc::clone(&script), Arc::clone(&kept));
            std::thread::spawn(move || serve(stream, &script, &seen));
        }
    });
    (url, seen)
}

fn serve(stream: TcpStream, script: &Script, seen: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
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
        let request: Value = serde_json::from_slice(&body).unwrap();
        let n = {
            let mut seen = seen.lock().unwrap();
            seen.push(request.clone());
            seen.len() - 1
        };
        let chunks = script(n, &request);
        if chunks.is_empty() {
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        let mut events = String::new();
        for chunk in chunks {
            events.push_str(&format!("data: {chunk}\n\n"));
        }
        events.push_str("data: [DONE]\n\n");
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            events.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(events.as_bytes()).is_err()
        {
            return;
        }
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }]
    })
}

/// A call of `name` with `arguments`, its JSON text streamed in two pieces.
fn calling(name: &str, arguments: &Value) -> Vec<Value> {
    let text = arguments.to_string();
    let (first, second) = text.split_at(text.len() / 2);
    vec![
        chunk(
            json!({ "role": "assistant", "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
                "function": { "name": name, "arguments": first } }] }),
            None,
        ),
        chunk(
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": second } }] }),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ]
}

/// An answer in two pieces.
fn answering(text: &str) -> Vec<Value> {
    let (first, second) = text.split_at(text.len() / 2);
    vec![
        chunk(json!({ "role": "assistant", "content": first }), None),
        chunk(json!({ "content": second }), None),
        chunk(json!({}), Some("stop")),
    ]
}

/// The text of the last message of a request (the tool's result, after a call).
fn last_text(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The declared name of the tool whose name contains `part`.
fn declared(request: &Value, part: &str) -> String {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .find(|name| name.contains(part))
        .unwrap_or_else(|| panic!("no tool like {part} in {}", request["tools"]))
        .to_owned()
}

/// Calls `shout` with "hi", then says what it returned.
fn shout_then_say() -> Script {
    Arc::new(|n, request| match n {
        0 => calling(&declared(request, "shout"), &json!({ "text": "hi" })),
        _ => answering(&format!("The tool said {}.", last_text(request))),
    })
}

fn chat(url: &str, args: &[&str]) -> (u8, String, String) {
    let mut argv = vec!["chat", "--model", "openai:test-model", "--base-url", url];
    argv.extend_from_slice(args);
    common::cli::run(Executor::builder(), &argv)
}

#[test]
fn the_answer_streams_to_stdout_and_each_call_and_result_to_stderr() {
    let (url, seen) = mock(shout_then_say());
    let (code, out, err) = chat(&url, &["shout hi"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "The tool said HI.\n");
    assert!(err.contains("-> shout {\"text\":\"hi\"}\n"), "{err}");
    assert!(err.contains("<- shout HI\n"), "{err}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["stream"], true);
    assert_eq!(seen[0]["messages"][0]["content"], "shout hi");
}

#[test]
fn json_prints_one_object_per_event_ending_with_the_answer() {
    let (url, _) = mock(shout_then_say());
    let (code, out, err) = chat(&url, &["--json", "shout hi"]);
    assert_eq!(code, 0, "{err}");
    let events: Vec<Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"call_delta"), "{kinds:?}");
    let call = events.iter().find(|e| e["event"] == "call").unwrap();
    assert_eq!(call["arguments"], json!({ "text": "hi" }));
    let result = events.iter().find(|e| e["event"] == "result").unwrap();
    assert_eq!(
        (&result["text"], &result["is_error"]),
        (&json!("HI"), &json!(false))
    );
    let last = events.last().unwrap();
    assert_eq!(last["event"], "finished");
    assert_eq!(last["stop"], "finished");
    assert_eq!(last["text"], "The tool said HI.");
}

#[test]
fn the_exit_code_says_how_the_run_ended() {
    // A model that never stops calling: the step limit, then one answer without tools.
    let endless: Script = Arc::new(|_, request| {
        // The last request, at the step limit, offers no tools.
        if request["tool_choice"] == "none" || request.get("tools").is_none() {
            answering("out of steps")
        } else {
            calling(&declared(request, "shout"), &json!({ "text": "again" }))
        }
    });
    let (url, _) = mock(endless);
    let (code, out, err) = chat(&url, &["--max-steps", "2", "shout forever"]);
    assert_eq!(code, 3, "{err}");
    assert!(out.ends_with("out of steps\n"), "{out}");
    assert!(err.contains("--max-steps (2)"), "{err}");

    let (url, _) = mock(Arc::new(|_, _| Vec::new()));
    let (code, _, err) = chat(&url, &["--max-time", "0.5", "hang"]);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("--max-time"), "{err}");

    let (code, _, err) =
        common::cli::run(Executor::builder(), &["chat", "--model", "gpt-4o", "hi"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected API:MODEL"), "{err}");
}

/// Where scripts/mcp-tools.sh put the Python SDK; `None` (the test skipped, said) when the
/// variable is unset and the default place lacks it.
fn python_sdk(test: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("AI_TOOL_MCP_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-tools"),
    };
    if dir.join("python").is_dir() {
        return Some(dir.join("python"));
    }
    assert!(
        std::env::var_os("AI_TOOL_MCP_TOOLS").is_none(),
        "AI_TOOL_MCP_TOOLS has no python/: run scripts/mcp-tools.sh"
    );
    eprintln!("note: {test} skipped: no MCP tools (run scripts/mcp-tools.sh)");
    None
}

/// `ai-tool chat --ask destructive` over the Python server's tools, through `python3 -c
/// PROGRAM` when one is given (the binary then runs under it), with `input` on standard input.
fn chat_over_python_server(sdk: &Path, url: &str, wrapper: Option<&str>, input: &str) -> Output {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_server.py");
    let chat = [
        env!("CARGO_BIN_EXE_ai-tool").to_owned(),
        "chat".into(),
        "--model".into(),
        "openai:test-model".into(),
        "--base-url".into(),
        url.into(),
        "--ask".into(),
        "destructive".into(),
        "--mcp-stdio".into(),
        format!("python3 {} stdio", server.display()),
        "shout hi".into(),
    ];
    let mut command = match wrapper {
        Some(program) => {
            let mut command = Command::new("python3");
            command.arg("-c").arg(program).args(&chat);
            command
        }
        None => {
            let mut command = Command::new(&chat[0]);
            command.args(&chat[1..]);
            command
        }
    };
    let mut child = command
        .env("PYTHONPATH", sdk)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs its arguments in a pseudo-terminal (standard input forwarded to it, its output to
/// standard output), exiting as it did.
const IN_A_TERMINAL: &str = "import os, pty, sys\n\
    status = pty.spawn(sys.argv[1:])\n\
    sys.exit(os.waitstatus_to_exitcode(status))\n";

#[test]
fn a_call_that_needs_approval_is_asked_on_a_terminal_and_refused_without_one() {
    let test = "a_call_that_needs_approval_is_asked_on_a_terminal_and_refused_without_one";
    let Some(sdk) = python_sdk(test) else {
        return;
    };
    // Without a terminal: refused, and the model told.
    let (url, seen) = mock(shout_then_say());
    let output = chat_over_python_server(&sdk, &url, None, "y\n");
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{err}");
    assert!(err.contains("refused: pysdk.shout needs approval"), "{err}");
    let told = last_text(&seen.lock().unwrap()[1]);
    assert!(told.contains("could not be asked"), "{told}");
    assert!(out.starts_with("The tool said "), "{out}");

    // In a terminal: asked; `e` edits the arguments.
    let (url, seen) = mock(shout_then_say());
    let output = chat_over_python_server(
        &sdk,
        &url,
        Some(IN_A_TERMINAL),
        "e\n{\"text\": \"edited\"}\n",
    );
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{screen}");
    assert!(
        screen
            .contains("approve pysdk.shout {\"text\":\"hi\"}? [y]es, [n]o, [e]dit the arguments:"),
        "{screen}"
    );
    let told = last_text(&seen.lock().unwrap()[1]);
    assert!(
        told.contains(r#"arguments to {"text":"edited"}"#) && told.ends_with("EDITED"),
        "{told}"
    );
}
