//! `silence_caught_panics`: quiet for the panics the executor catches, and every other panic
//! still reaches the hook installed before. (A binary of its own: the hook is global.)

use std::sync::Mutex;

use ai_tool::prelude::*;
use serde_json::json;

/// Panics on purpose.
#[ai_tool]
fn explode(message: String) -> String {
    panic!("{message}")
}

/// Panics on purpose, after a first poll.
#[ai_tool]
async fn explode_later(message: String) -> String {
    tokio::task::yield_now().await;
    panic!("{message}")
}

static HEARD: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn heard() -> Vec<String> {
    HEARD.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[tokio::test]
async fn caught_panics_are_silent_and_other_panics_reach_the_previous_hook() {
    std::panic::set_hook(Box::new(|info| {
        HEARD
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(info.to_string());
    }));
    ai_tool::silence_caught_panics();
    ai_tool::silence_caught_panics(); // installing twice is harmless

    let exec = Executor::builder().build().unwrap();
    for tool in ["explode", "explode_later"] {
        let err = exec
            .execute(tool, json!({ "message": "in a tool" }))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::Panicked, "{err}");
    }
    assert_eq!(heard(), Vec::<String>::new(), "caught panics print nothing");
    assert!(!ai_tool::inside_tool_call());

    let _ = std::panic::catch_unwind(|| panic!("outside any tool"));
    let heard = heard();
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert!(heard[0].contains("outside any tool"), "{heard:?}");
}
