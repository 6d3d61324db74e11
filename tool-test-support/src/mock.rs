//! A mock model server on 127.0.0.1: canned answers in order, every request recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::Value;

/// One request as the server received it.
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    /// The body's bytes, as sent.
    pub raw: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }
}

/// One canned answer: status, extra headers, body; server-sent events; bytes of a content
/// type (an AWS event stream); or a wait that never ends.
pub enum Canned {
    Answer(u16, Vec<(&'static str, String)>, Value),
    Events(String),
    Bytes(&'static str, Vec<u8>),
    Hang,
}

#[derive(Default)]
pub struct Mock {
    answers: Mutex<VecDeque<Canned>>,
    /// Every request received.
    pub seen: Mutex<Vec<Seen>>,
    /// Notified as each request arrives.
    pub arrived: tokio::sync::Notify,
}

async fn answer(
    State(mock): State<Arc<Mock>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = body.to_vec();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    mock.seen.lock().unwrap().push(Seen {
        path: uri.path().to_owned(),
        headers,
        body,
        raw,
    });
    mock.arrived.notify_one();
    let next = mock.answers.lock().unwrap().pop_front();
    match next {
        Some(Canned::Answer(status, extra, body)) => {
            let mut response = (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                body.to_string(),
            )
                .into_response();
            for (name, value) in extra {
                response.headers_mut().insert(name, value.parse().unwrap());
            }
            response
        }
        Some(Canned::Events(text)) => (
            StatusCode::OK,
            [("content-type", "text/event-stream")],
            text,
        )
            .into_response(),
        Some(Canned::Bytes(content_type, bytes)) => {
            (StatusCode::OK, [("content-type", content_type)], bytes).into_response()
        }
        Some(Canned::Hang) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        None => (StatusCode::NOT_FOUND, "no answer left").into_response(),
    }
}

/// A mock server with these answers; its base URL ends with `/v1`.
pub async fn serve(answers: Vec<Canned>) -> (Arc<Mock>, String) {
    let mock = Arc::new(Mock {
        answers: Mutex::new(answers.into()),
        ..Mock::default()
    });
    let app = Router::new().fallback(answer).with_state(Arc::clone(&mock));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (mock, format!("http://{address}/v1"))
}

/// A whole Anthropic Messages answer of this content, ended by `stop`.
pub fn anthropic_answer(content: Value, stop: &str) -> Value {
    serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": { "input_tokens": 10, "output_tokens": 5 }
    })
}

/// A whole OpenAI Responses answer of these output items.
pub fn responses_answer(output: Value) -> Value {
    serde_json::json!({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5.4",
        "status": "completed", "output": output, "parallel_tool_calls": true,
        "tool_choice": "auto", "tools": []
    })
}

/// A canned `200` of this JSON.
pub fn ok(body: Value) -> Canned {
    Canned::Answer(200, Vec::new(), body)
}
