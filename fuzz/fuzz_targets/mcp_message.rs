//! The MCP server's message handling: arbitrary bytes, a JSON-RPC message a line, sent to an
//! [`McpServer`] over an in-process pipe in the stdio framing (rmcp's own transport), after a
//! real `initialize` (or, when the first byte says so, before it). What must hold: no panic;
//! every request with an id gets exactly one response (one with its id, or, for a request
//! rmcp cannot read, at most one `Invalid Request` error without an id; an id the client uses
//! again while it is pending, which MCP forbids, gets at least one); the server keeps
//! serving (a `tools/list` sent after the junk lists the tools); and it ends when the client
//! closes the pipe.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use ai_tool::mcp::rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, NumberOrString};
use ai_tool::mcp::rmcp::ServiceExt;
use ai_tool::mcp::McpServer;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The id of the `tools/list` sent after the junk.
const LAST: &str = "after-the-junk";

/// How long the server may take to answer everything, or to end once the client has gone: far
/// more than it needs, so that only a lost answer or a stuck server reaches it.
const PATIENCE: Duration = Duration::from_secs(5);

fn server() -> McpServer {
    static SERVER: OnceLock<McpServer> = OnceLock::new();
    SERVER
        .get_or_init(|| McpServer::new(common::executor().clone()).expect("the server builds"))
        .clone()
}

fn line(message: Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&message).expect("a message serializes");
    line.push(b'\n');
    line
}

/// What the server must answer: requests it can read (by id: how many asked, how many answers
/// came), and lines that look like requests but that it cannot read (answered with their id or
/// with an error without one).
#[derive(Default)]
struct Expected {
    exact: HashMap<NumberOrString, (usize, usize)>,
    /// Ids of requests whose answer may be left out: the client cancelled them.
    cancelled: Vec<NumberOrString>,
    loose: HashMap<Value, usize>,
}

impl Expected {
    /// Reads one line as the server's transport does (a BOM and a `\r` dropped).
    fn add(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
            Ok(JsonRpcMessage::Request(request)) => {
                self.exact.entry(request.id).or_default().0 += 1
            }
            Ok(JsonRpcMessage::Notification(notification)) => {
                let value = serde_json::to_value(&notification).unwrap_or_default();
                if value["method"] == "notifications/cancelled" {
                    if let Ok(id) = serde_json::from_value(value["params"]["requestId"].clone()) {
                        self.cancelled.push(id);
                    }
                }
            }
            Ok(_) => {}
            Err(_) => {
                let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
                    return;
                };
                let id = message.get("id").filter(|id| id.is_string() || id.is_i64());
                if let (Some(id), Some(Value::String(_))) = (id, message.get("method")) {
                    *self.loose.entry(id.clone()).or_default() += 1;
                }
            }
        }
    }

    /// Counts an answer; panics on one nobody asked for.
    fn answered(&mut self, id: &Value, is_error: bool) {
        if let Ok(known) = serde_json::from_value::<NumberOrString>(id.clone()) {
            if let Some((asked, answers)) = self.exact.get_mut(&known) {
                if answers < asked {
                    *answers += 1;
                    return;
                }
            }
        }
        if let Some(left) = self.loose.get_mut(id).filter(|n| **n > 0) {
            *left -= 1;
            return;
        }
        if id.is_null() && is_error {
            // An `Invalid Request` for a line rmcp could not read as a message.
            let unread = self.loose.values_mut().find(|n| **n > 0);
            if let Some(left) = unread {
                *left -= 1;
            }
            return;
        }
        panic!("an answer with id {id} that no request (still unanswered) had");
    }

    /// The requests that must be answered and were not.
    fn waiting_for(&self) -> Vec<&NumberOrString> {
        self.exact
            .iter()
            .filter(|(id, (_, answers))| *answers == 0 && !self.cancelled.contains(id))
            .map(|(id, _)| id)
            .collect()
    }
}

async fn run(data: &[u8]) {
    let Some((&mode, junk)) = data.split_first() else {
        return;
    };
    let junk_first = mode % 8 == 0;
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let serving = tokio::spawn(async move {
        if let Ok(running) = server().serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();

    let mut expected = Expected::default();
    let mut sent = Vec::new();
    let handshake = [
        line(json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "fuzz", "version": "0" }
            }
        })),
        line(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })),
    ];
    let mut junk_lines = Vec::new();
    for piece in junk.split(|b| *b == b'\n') {
        let mut piece = piece.to_vec();
        piece.push(b'\n');
        junk_lines.push(piece);
    }
    if !junk_first {
        expected.add(&handshake[0][..handshake[0].len() - 1]);
        sent.extend(handshake.iter().cloned());
    }
    if !junk_first {
        for piece in &junk_lines {
            expected.add(&piece[..piece.len() - 1]);
        }
    }
    sent.extend(junk_lines);
    let last = line(json!({ "jsonrpc": "2.0", "id": LAST, "method": "tools/list" }));
    if !junk_first {
        expected.add(&last[..last.len() - 1]);
    }
    sent.push(last);
    // Written while the answers are read, so that neither side waits on a full pipe.
    let writing = tokio::spawn(async move {
        for piece in sent {
            if write.write_all(&piece).await.is_err() {
                return None;
            }
        }
        Some(write)
    });

    let mut listed = None;
    if junk_first {
        // Before the handshake the server may refuse everything: only no panic, and the end.
        return close(writing, lines, serving, |_| {}).await;
    }
    let answers = tokio::time::timeout(PATIENCE, async {
        while !expected.waiting_for().is_empty() {
            let Ok(Some(text)) = lines.next_line().await else {
                break;
            };
            read_answer(&text, &mut expected, &mut listed);
        }
    })
    .await;
    let waiting = expected.waiting_for();
    assert!(
        answers.is_ok() && waiting.is_empty(),
        "requests never answered: {waiting:?}"
    );
    let mentions_last = junk.windows(LAST.len()).any(|w| w == LAST.as_bytes());
    if !mentions_last {
        let listed = listed
            .take()
            .expect("the tools/list after the junk is answered");
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list after the junk failed: {listed}"))
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"exact") && names.contains(&"dynamic"),
            "{names:?}"
        );
    }

    // The client goes: the server ends, and answers nothing twice meanwhile.
    close(writing, lines, serving, |text| {
        read_answer(text, &mut expected, &mut listed)
    })
    .await;
}

/// Closes the client's side once everything is written; reads what is left (each line given
/// to `each`) and waits for the server to end.
async fn close(
    writing: tokio::task::JoinHandle<Option<tokio::io::WriteHalf<tokio::io::DuplexStream>>>,
    mut lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    serving: tokio::task::JoinHandle<()>,
    mut each: impl FnMut(&str),
) {
    if let Some(mut write) = writing.await.expect("the writer") {
        let _ = write.shutdown().await;
    }
    let ended = tokio::time::timeout(PATIENCE, async {
        while let Ok(Some(text)) = lines.next_line().await {
            each(&text);
        }
        serving.await.expect("the server's task");
    })
    .await;
    assert!(ended.is_ok(), "the server did not end when the client went");
}

/// One line from the server: an answer is counted (a `tools/list` with the last id kept),
/// requests and notifications to the client are let be.
fn read_answer(text: &str, expected: &mut Expected, listed: &mut Option<Value>) {
    let message: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {text}"));
    let is_answer = message.get("result").is_some() || message.get("error").is_some();
    if !is_answer {
        return;
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    expected.answered(&id, message.get("error").is_some());
    if id == LAST && message["result"]["tools"].is_array() {
        *listed = Some(message);
    }
}

fuzz_target!(|data: &[u8]| {
    common::block_on(run(data));
});
