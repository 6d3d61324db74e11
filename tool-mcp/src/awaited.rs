//! Waiting on a task an imported server made of a call (the tasks extension of protocol
//! 2026-07-28): `tasks/get` every poll interval the server asks for (held between 50 ms and
//! 5 s) until the task ends, its status messages passed on as the call's log. The caller's
//! cancellation and time limit end the wait and send `tasks/cancel`.

use std::time::Duration;

use rmcp::model::{CallToolResult, CancelTaskParams, CreateTaskResult, GetTaskParams, TaskPayload};
use rmcp::service::{Peer, RoleClient};
use tool_runtime::{LogLevel, ToolContext};

/// How a task the server made ended, as the call's answer.
pub(crate) enum Ended {
    /// The call's result (an error result included).
    Result(CallToolResult),
    /// The task failed, or answered what the import cannot read: the message says which.
    Failed(String),
    /// The server cancelled it.
    Cancelled,
}

/// The shortest and longest wait between two polls, whatever the server asks.
const FASTEST_POLL: Duration = Duration::from_millis(50);
const SLOWEST_POLL: Duration = Duration::from_secs(5);

/// Waits for task `created` to end. Dropped before it ends (the caller's time limit or
/// cancellation), it tells the server to cancel the task.
pub(crate) async fn task_ended(
    peer: &Peer<RoleClient>,
    created: CreateTaskResult,
    ctx: &ToolContext<'static>,
) -> Ended {
    let id = created.task.task_id.clone();
    let mut cancel = CancelOnDrop(Some((peer.clone(), id.clone())));
    let interval = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(1000))
        .clamp(FASTEST_POLL, SLOWEST_POLL);
    let mut said = created.task.status_message.clone();
    let ended = loop {
        tokio::time::sleep(interval).await;
        let got = match peer.get_task(GetTaskParams::new(id.clone())).await {
            Ok(got) => got,
            Err(e) => break Ended::Failed(format!("tasks/get for its task failed: {e}")),
        };
        let message = got.task.task.status_message.clone();
        if message.is_some() && message != said {
            if let Some(message) = &message {
                ctx.log(LogLevel::Info, message);
            }
            said = message;
        }
        match got.task.payload {
            TaskPayload::Working => continue,
            TaskPayload::Completed { result } => {
                break match serde_json::from_value(serde_json::Value::Object(result)) {
                    Ok(result) => Ended::Result(result),
                    Err(e) => Ended::Failed(format!("its task's result is not a tool result: {e}")),
                }
            }
            TaskPayload::Failed { error } => {
                let message = error
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or("no message");
                break Ended::Failed(format!("its task failed: {message}"));
            }
            TaskPayload::Cancelled => break Ended::Cancelled,
            // Questions asked through a task are not passed on (yet): the task is cancelled.
            TaskPayload::InputRequired { .. } => {
                break Ended::Failed(
                    "its task asks for input, which an import does not pass on through tasks"
                        .into(),
                )
            }
            _ => break Ended::Failed("its task answered with an unknown status".into()),
        }
    };
    // Ended by itself: nothing to cancel, unless it asks for what cannot be given.
    if !matches!(&ended, Ended::Failed(m) if m.contains("asks for input")) {
        cancel.0 = None;
    }
    ended
}

/// Sends `tasks/cancel` for a task whose caller stopped waiting.
struct CancelOnDrop(Option<(Peer<RoleClient>, String)>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.cancel_task(CancelTaskParams::new(id)).await;
            });
        }
    }
}
