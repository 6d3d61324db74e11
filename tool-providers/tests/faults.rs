//! Faults of a model endpoint, against servers on 127.0.0.1: one that never answers, answers
//! with 5xx before streaming, stalls in the middle of a stream, or cuts the connection. Each
//! ends in bounded time with a typed error (or the answer, once the retries get it), and the
//! text read before a failure is not lost.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_agent::{Agent, ModelError, RunEvent, RunFailure, RunOptions};
use tool_providers::{ApiKey, OpenAiChatModel, RetryPolicy};
use tool_test_support::mock::{serve, Canned};

/// Far longer than any of these runs needs: reaching it means something was stuck.
const STUCK: Duration = Duration::from_secs(30);

fn model(base_url: &str, client: reqwest::Client, max_retries: u32) -> OpenAiChatModel {
    OpenAiChatModel::new("test-model")
        .with_base_url(base_url)
        .with_api_key(ApiKey::new("sk-test"))
        .with_client(client)
        .with_retry(RetryPolicy {
            max_retries,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(20),
        })
}

const HELLO: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n";

/// A server that reads each request whole, writes `answer`, then closes the connection
/// (`close`) or holds it open saying nothing more. Counts the requests.
async fn raw_server(answer: String, close: bool) -> (Arc<AtomicUsize>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let answer = answer.clone();
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                read_request(&mut socket).await;
                counted.fetch_add(1, Ordering::SeqCst);
                socket.write_all(answer.as_bytes()).await.unwrap();
                socket.flush().await.unwrap();
                if close {
                    let _ = socket.shutdown().await;
                } else {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
            });
        }
    });
    (requests, format!("http://{address}/v1"))
}

/// Reads a request's head and its `content-length` bytes of body.
async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    let body_start = loop {
        let n = socket.read(&mut buffer).await.unwrap();
        assert!(n > 0, "the client closed before its request was whole");
        seen.extend_from_slice(&buffer[..n]);
        if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&seen[..body_start]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while seen.len() < body_start + length {
        let n = socket.read(&mut buffer).await.unwrap();
        assert!(n > 0, "the client closed before its request was whole");
        seen.extend_from_slice(&buffer[..n]);
    }
}

/// The message of a run that failed on the model's transport; any other failure fails the test.
fn transport_message(failure: RunFailure) -> String {
    match failure {
        RunFailure::Model {
            error: ModelError::Transport { message, .. },
            ..
        } => message,
        other => panic!("expected a transport error, got {other:?}"),
    }
}

/// Runs a streamed run to its end (within [`STUCK`]): the text deltas, and how it failed.
async fn streamed_failure(model: OpenAiChatModel) -> (Vec<String>, RunFailure) {
    let runner = Agent::builder(model).build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> =
        tokio::time::timeout(STUCK, runner.run_stream("hi", &options).collect())
            .await
            .expect("the run is stuck");
    let mut deltas = Vec::new();
    let mut finished = None;
    for event in events {
        match event {
            RunEvent::TextDelta { text, .. } => deltas.push(text),
            RunEvent::Finished(result) => finished = Some(*result),
            _ => {}
        }
    }
    let err = finished.expect("the last event is Finished").unwrap_err();
    (deltas, err.failure)
}

#[tokio::test]
async fn an_endpoint_that_never_answers_is_a_transport_error_after_the_timeout_and_retries() {
    let (mock, base_url) = serve(vec![Canned::Hang, Canned::Hang]).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let runner = Agent::builder(model(&base_url, client, 1)).build();
    let err = tokio::time::timeout(STUCK, runner.run("hello", &RunOptions::default()))
        .await
        .expect("the run is stuck")
        .unwrap_err();
    match &err.failure {
        RunFailure::Model {
            error: ModelError::Transport {
                attempts, message, ..
            },
            ..
        } => {
            assert_eq!(*attempts, 2, "one try and one retry");
            assert!(message.contains("timed out"), "{message}");
        }
        other => panic!("unexpected: {other:?}"),
    }
    assert_eq!(mock.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_streamed_request_answered_with_5xx_is_retried_then_streamed() {
    let failing = |status| {
        Canned::Answer(
            status,
            Vec::new(),
            json!({ "error": { "message": "busy" } }),
        )
    };
    let stream = Canned::Events(format!("{HELLO}data: {{\"choices\":[{{\"delta\":{{\"content\":\"lo\"}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n"));
    let (mock, base_url) = serve(vec![failing(500), failing(502), stream]).await;
    let runner = Agent::builder(model(&base_url, reqwest::Client::new(), 2)).build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> =
        tokio::time::timeout(STUCK, runner.run_stream("hi", &options).collect())
            .await
            .expect("the run is stuck");
    let Some(RunEvent::Finished(result)) = events.into_iter().last() else {
        panic!("the last event is Finished");
    };
    assert_eq!(result.unwrap().text, "Hello");
    assert_eq!(
        mock.seen.lock().unwrap().len(),
        3,
        "two refusals, then the stream"
    );
}

#[tokio::test]
async fn a_streamed_request_refused_past_the_retries_is_a_status_error_with_the_message() {
    let failing = || {
        Canned::Answer(
            503,
            Vec::new(),
            json!({ "error": { "message": "overloaded" } }),
        )
    };
    let (mock, base_url) = serve(vec![failing(), failing()]).await;
    let (deltas, failure) = streamed_failure(model(&base_url, reqwest::Client::new(), 1)).await;
    assert!(deltas.is_empty(), "{deltas:?}");
    match failure {
        RunFailure::Model {
            error:
                ModelError::Status {
                    status: 503,
                    attempts: 2,
                    message,
                    ..
                },
            ..
        } => assert_eq!(message, "overloaded"),
        other => panic!("unexpected: {other:?}"),
    }
    assert_eq!(mock.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_stream_that_stalls_mid_answer_is_a_transport_error_after_the_read_timeout() {
    let chunk = format!("{:x}\r\n{HELLO}\r\n", HELLO.len());
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{chunk}"
    );
    let (requests, base_url) = raw_server(answer, false).await;
    // The default client's read timeout, shortened.
    let model = model(&base_url, reqwest::Client::new(), 2)
        .with_timeouts(Duration::from_secs(5), Duration::from_millis(300));
    let (deltas, failure) = streamed_failure(model).await;
    assert_eq!(deltas, ["Hel"], "what came before the stall is kept");
    let message = transport_message(failure);
    assert!(message.starts_with("the stream broke"), "{message}");
    assert_eq!(
        requests.load(Ordering::SeqCst),
        1,
        "a stream begun is not retried"
    );
}

#[tokio::test]
async fn a_stream_cut_by_the_connection_is_a_transport_error() {
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 1000\r\n\r\n{HELLO}"
    );
    let (requests, base_url) = raw_server(answer, true).await;
    let (deltas, failure) = streamed_failure(model(&base_url, reqwest::Client::new(), 2)).await;
    assert_eq!(deltas, ["Hel"], "what came before the cut is kept");
    let message = transport_message(failure);
    assert!(message.starts_with("the stream broke"), "{message}");
    assert_eq!(
        requests.load(Ordering::SeqCst),
        1,
        "a stream begun is not retried"
    );
}

/// The message of a malformed answer.
fn malformed_message(failure: RunFailure) -> String {
    match failure {
        RunFailure::Model {
            error: ModelError::Malformed { message, .. },
            ..
        } => message,
        other => panic!("expected a malformed answer, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stream_line_over_16_mib_is_an_error_naming_the_limit() {
    // One line that never ends: nothing past the limit is held.
    let endless = format!("{HELLO}data: {}", "x".repeat(17 << 20));
    let (_mock, base_url) = serve(vec![Canned::Events(endless)]).await;
    let (deltas, failure) = streamed_failure(model(&base_url, reqwest::Client::new(), 0)).await;
    assert_eq!(deltas, ["Hel"], "what came before the limit is kept");
    let message = malformed_message(failure);
    assert!(message.contains("longer than 16777216 bytes"), "{message}");
}

/// A stream's body is many times its answer, so the body may pass 16 MiB; the answer's text
/// may not.
#[tokio::test]
async fn a_streamed_text_over_16_mib_is_an_error_naming_the_limit() {
    let piece = "x".repeat(64 << 10);
    let line = format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{piece}\"}}}}]}}\n\n");
    let body = line.repeat(257);
    let (_mock, base_url) = serve(vec![Canned::Events(body)]).await;
    let (deltas, failure) = streamed_failure(model(&base_url, reqwest::Client::new(), 0)).await;
    assert_eq!(deltas.len(), 256, "the text up to the limit is given");
    let message = malformed_message(failure);
    assert!(
        message.contains("text and tool calls are longer than 16777216 bytes"),
        "{message}"
    );
}

/// A base URL that answers 302 to another port: the key never arrives there. reqwest drops
/// `Authorization` on a redirect to another host, but not `x-api-key`, `x-goog-api-key` or a
/// `with_header` value; the clients follow no redirect at all, and say where it pointed
/// (without its query, which may carry a secret).
#[tokio::test]
async fn a_redirect_to_another_port_is_refused_and_no_key_arrives_there() {
    use tool_agent::{ChatModel, ModelRequest};
    use tool_providers::{AnthropicModel, GeminiModel};
    // Where the redirect points: it counts every connection made to it.
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere_address = elsewhere.local_addr().unwrap();
    let reached = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reached);
    tokio::spawn(async move {
        while let Ok((_socket, _)) = elsewhere.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    let location = format!("http://{elsewhere_address}/v1/steal?token=hunter2");
    let answer = format!(
        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let (requests, base_url) = raw_server(answer, true).await;
    let no_retries = RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::default()
    };
    let models: Vec<Box<dyn ChatModel>> = vec![
        Box::new(
            OpenAiChatModel::new("m")
                .with_base_url(&base_url)
                .with_api_key(ApiKey::new("sk-secret"))
                .with_header("x-gateway-key", "gw-secret")
                .with_retry(no_retries),
        ),
        Box::new(
            AnthropicModel::new("m")
                .with_base_url(&base_url)
                .with_api_key(ApiKey::new("sk-ant-secret"))
                .with_retry(no_retries),
        ),
        Box::new(
            GeminiModel::new("m")
                .with_base_url(&base_url)
                .with_api_key(ApiKey::new("goog-secret"))
                .with_retry(no_retries),
        ),
    ];
    for model in &models {
        let request = ModelRequest::new(vec![tool_agent::Message::user("hi")]);
        let error = tokio::time::timeout(STUCK, model.respond(&request))
            .await
            .expect("stuck")
            .unwrap_err();
        match &error {
            ModelError::Status {
                status, message, ..
            } => {
                assert_eq!(*status, 302);
                assert!(message.contains("follow no redirect"), "{message}");
                assert!(
                    message.contains(&elsewhere_address.to_string()),
                    "{message}"
                );
                assert!(!message.contains("hunter2"), "{message}");
            }
            other => panic!("expected a status error, got {other:?}"),
        }
    }
    assert_eq!(requests.load(Ordering::SeqCst), 3, "each client asked once");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "nothing followed the redirect"
    );
}
