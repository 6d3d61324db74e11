//! The future of one call, written by hand: its synchronous part runs in the first poll, and a
//! sync tool's result comes straight out of that poll, with no state machine around it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tool_core::{ToolError, ToolOutput};

use super::{CallOptions, Executor};
use crate::boxed::BoxFuture;
use crate::IntoArguments;

/// One tool call: what [`Executor::execute`] and [`Executor::execute_with`] return.
///
/// Like an `async fn`, it does nothing until it is first polled. It borrows the executor, the
/// tool name and the options for as long as it runs, and keeps the arguments it was given until
/// it is dropped, as an `async fn` keeps its parameters; the first poll reads them where they
/// are. It is `Send`, so a task that owns an executor clone can await it on any thread. Dropping
/// it stops an async tool's work where it stands.
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<'c, A> {
    executor: &'c Executor,
    name: &'c str,
    /// The arguments as they came, which for JSON text is a reference. They stay here for the
    /// whole call: the first poll reads them in place.
    args: A,
    options: &'c CallOptions,
    /// Whether the first poll has run.
    started: bool,
    /// An async tool at work, after the first poll.
    waiting: Option<BoxFuture<'c, Result<ToolOutput, ToolError>>>,
}

impl<'c, A> Call<'c, A> {
    pub(super) fn new(
        executor: &'c Executor,
        name: &'c str,
        args: A,
        options: &'c CallOptions,
    ) -> Self {
        Call {
            executor,
            name,
            args,
            options,
            started: false,
            waiting: None,
        }
    }
}

/// Nothing in a call is pinned in place: the arguments are only ever reached by `&mut`, and an
/// async tool's future is pinned in its own box. So a call moves freely whatever its arguments.
impl<A> Unpin for Call<'_, A> {}

impl<A: IntoArguments> Future for Call<'_, A> {
    type Output = Result<ToolOutput, ToolError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(future) = &mut this.waiting {
            let polled = future.as_mut().poll(cx);
            if polled.is_ready() {
                this.waiting = None;
            }
            return polled;
        }
        assert!(!this.started, "a tool call was polled after it completed");
        this.started = true;
        // The first poll's result is this poll's: a sync tool's output is written once, in
        // place, with no enum between the tool and the caller.
        this.executor.start(
            this.name,
            &mut this.args.raw(),
            this.options,
            cx,
            &mut this.waiting,
        )
    }
}

impl<A> std::fmt::Debug for Call<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match (self.started, &self.waiting) {
            (false, _) => "not started",
            (true, Some(_)) => "waiting",
            (true, None) => "finished",
        };
        f.debug_struct("Call").field("state", &state).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_send<T: Send>(_: &T) {}

    /// That a call is `Send` is checked when this compiles; that one sent to another thread
    /// runs there, when it runs.
    #[test]
    fn a_call_can_move_between_threads_whatever_its_arguments() {
        let exec = Executor::builder()
            .build()
            .expect("an empty executor builds");
        let options = CallOptions::default();
        is_send(&exec.execute("any", serde_json::json!({})));
        is_send(&exec.execute("any", "{}"));
        is_send(&exec.execute_with("any", String::from("{}"), &options));
        let ended = std::thread::scope(|scope| {
            let call = exec.execute_with("any", String::from("{}"), &options);
            scope
                .spawn(move || {
                    let mut call = std::pin::pin!(call);
                    let waker = std::task::Waker::noop();
                    call.as_mut().poll(&mut Context::from_waker(waker))
                })
                .join()
                .expect("the thread ends")
        });
        assert!(
            matches!(ended, Poll::Ready(Err(ToolError::UnknownTool { ref name, .. })) if name == "any"),
            "{ended:?}"
        );
    }
}
