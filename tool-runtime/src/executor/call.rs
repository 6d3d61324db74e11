//! The future of one call, written by hand: its synchronous part runs in the first poll, and a
//! sync tool's result comes straight out of that poll, with no state machine around it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tool_core::{ToolError, ToolOutput};

use super::{CallOptions, Executor, Started};
use crate::registration::BoxFuture;
use crate::IntoArguments;

/// One tool call: what [`Executor::execute`] and [`Executor::execute_with`] return.
///
/// Like an `async fn`, it does nothing until it is first polled. It borrows the executor, the
/// tool name and the options for as long as it runs; it is `Send`, so a task that owns an
/// executor clone can await it on any thread. Dropping it stops an async tool's work where it
/// stands.
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<'c, A> {
    state: State<'c, A>,
}

enum State<'c, A> {
    /// Not polled yet. The arguments are kept as they came, which for JSON text is a reference.
    Start {
        executor: &'c Executor,
        name: &'c str,
        args: A,
        options: Option<&'c CallOptions>,
    },
    /// An async tool at work.
    Waiting(BoxFuture<'c, Result<ToolOutput, ToolError>>),
    /// The result was given out.
    Finished,
}

impl<'c, A> Call<'c, A> {
    pub(super) fn new(
        executor: &'c Executor,
        name: &'c str,
        args: A,
        options: Option<&'c CallOptions>,
    ) -> Self {
        Call {
            state: State::Start {
                executor,
                name,
                args,
                options,
            },
        }
    }
}

impl<'c, A: IntoArguments<'c> + Unpin> Future for Call<'c, A> {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let state = &mut self.state;
        let mut future = match std::mem::replace(state, State::Finished) {
            State::Start {
                executor,
                name,
                args,
                options,
            } => match executor.start(name, &mut args.into_raw(), options) {
                Started::Done(result) => return Poll::Ready(result),
                Started::Waiting(future) => future,
            },
            State::Waiting(future) => future,
            State::Finished => panic!("a tool call was polled after it completed"),
        };
        let polled = future.as_mut().poll(cx);
        if polled.is_pending() {
            *state = State::Waiting(future);
        }
        polled
    }
}

impl<A> std::fmt::Debug for Call<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Start { .. } => "not started",
            State::Waiting(_) => "waiting",
            State::Finished => "finished",
        };
        f.debug_struct("Call").field("state", &state).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_send<T: Send>(_: &T) {}

    #[test]
    fn a_call_can_move_between_threads_whatever_its_arguments() {
        let exec = Executor::builder()
            .build()
            .expect("an empty executor builds");
        let options = CallOptions::default();
        is_send(&exec.execute("any", serde_json::json!({})));
        is_send(&exec.execute("any", "{}"));
        is_send(&exec.execute_with("any", String::from("{}"), &options));
    }
}
