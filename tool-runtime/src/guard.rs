//! Protection around a call: a panicking tool becomes `ToolError::Panicked`, a slow one
//! `TimedOut`, a cancelled one `Cancelled`. The executor goes on serving in every case.

use std::any::Any;
use std::future::Future;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tool_core::{ToolError, ToolOutput};

use crate::boxed::BoxFuture;
use crate::panics as quiet;

/// Runs a sync call (or the sync start of an async one), turning a panic into an error.
#[inline]
pub(crate) fn sync_call<T>(
    tool: &str,
    call: impl FnOnce() -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    sync_call_into(tool, call, |result| result)
}

/// `sync_call`, with the result handed to `into` (`Poll::Ready`, say) on each path apart.
///
/// Both choices are about copies of the ~100-byte result. The call writes it into a slot that
/// is read only once the call has returned: `catch_unwind(call)` would hand it back inside a
/// second `Result` whose tag shares the result's first word, and testing that word splits the
/// copies that follow around it. And each path builds the caller's value on its own, so the
/// success path makes one whole copy. A copy split differently from the next one is read 16
/// bytes at a time across stores of 8, and waits for them to land. Kept because it is measured:
/// with plain `catch_unwind` instead, sync calls took 5-7% longer (see `docs/performance.md`).
#[inline]
pub(crate) fn sync_call_into<T, O>(
    tool: &str,
    call: impl FnOnce() -> Result<T, ToolError>,
    into: impl FnOnce(Result<T, ToolError>) -> O,
) -> O {
    let mut slot = MaybeUninit::uninit();
    let outcome = quiet::caught(|| {
        catch_unwind(AssertUnwindSafe(|| {
            slot.write(call());
        }))
    });
    match outcome {
        // SAFETY: the closure returned, and its one statement wrote the slot.
        Ok(()) => into(unsafe { slot.assume_init() }),
        Err(payload) => into(Err(panicked(tool, &*payload))),
    }
}

pub(crate) fn panicked(tool: &str, payload: &(dyn Any + Send)) -> ToolError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".to_owned());
    ToolError::Panicked {
        tool: tool.to_owned(),
        message,
    }
}

/// A future whose panics, while it is polled, are caught.
pub(crate) struct CatchUnwind<F> {
    inner: F,
}

impl<F> CatchUnwind<F> {
    pub(crate) fn new(inner: F) -> Self {
        CatchUnwind { inner }
    }
}

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.inner;
        match quiet::caught(|| catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx)))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Awaits a tool's future under its time limit and the caller's cancellation.
///
/// Cancel-safe: dropping it drops the tool's future. The call's own token (`call_token`, given
/// to its context) is cancelled when the time limit passes, when the caller cancels, or when
/// this is dropped before the tool finished: what tells a tool on the blocking pool, or a task
/// it spawned, to stop.
pub(crate) async fn guarded<F>(
    tool: &str,
    future: F,
    timeout: Option<Duration>,
    cancellation: Option<&CancellationToken>,
    call_token: Option<CancellationToken>,
) -> Result<ToolOutput, ToolError>
where
    F: Future<Output = Result<ToolOutput, ToolError>>,
{
    let stop = call_token.map(CancellationToken::drop_guard);
    // Whether the tool's future ended, whatever it returned (its own `TimedOut` from a call
    // it made, say).
    let finished = std::sync::atomic::AtomicBool::new(false);
    let future = std::pin::pin!(future);
    let caught = async {
        let result = CatchUnwind::new(future)
            .await
            .unwrap_or_else(|payload| Err(panicked(tool, &*payload)));
        finished.store(true, std::sync::atomic::Ordering::Relaxed);
        result
    };
    let timed = async {
        match timeout {
            Some(limit) => match timer(tool, limit, caught) {
                Ok(timer) => timer.await.unwrap_or_else(|_| {
                    Err(ToolError::TimedOut {
                        tool: tool.to_owned(),
                        after: limit,
                    })
                }),
                Err(e) => Err(e),
            },
            None => caught.await,
        }
    };
    let result = match cancellation {
        Some(token) => tokio::select! {
            biased;
            () = token.cancelled() => Err(ToolError::Cancelled { tool: tool.to_owned() }),
            result = timed => result,
        },
        None => timed.await,
    };
    if finished.load(std::sync::atomic::Ordering::Relaxed) {
        // The tool finished: what it left running is its own to stop.
        stop.map(tokio_util::sync::DropGuard::disarm);
    }
    result
}

/// `future` under a time limit, or `Misconfigured` when no tokio timer can be had here: tokio
/// panics when a timer is made outside a runtime or on one built without its time driver, and
/// has no way to ask first.
fn timer<F: Future>(
    tool: &str,
    limit: Duration,
    future: F,
) -> Result<tokio::time::Timeout<F>, ToolError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(no_runtime(tool, "a time limit"));
    }
    let made =
        quiet::caught(|| catch_unwind(AssertUnwindSafe(|| tokio::time::timeout(limit, future))));
    made.map_err(|_| ToolError::Misconfigured {
        tool: tool.to_owned(),
        message: format!(
            "it has a time limit ({limit:?}), and the tokio runtime polling the call has no time \
             driver; build the runtime with `enable_time()` or `enable_all()`"
        ),
    })
}

/// Whether a time limit can be kept where the call is polled: `Misconfigured` if not.
pub(crate) fn check_timer(tool: &str, limit: Duration) -> Result<(), ToolError> {
    timer(tool, limit, std::future::ready(())).map(drop)
}

/// The error for a call that needs a tokio runtime (for `what`) and was polled outside one.
pub(crate) fn no_runtime(tool: &str, what: &str) -> ToolError {
    ToolError::Misconfigured {
        tool: tool.to_owned(),
        message: format!(
            "it needs a tokio runtime for {what}, and the call was polled outside one; await it \
             inside a tokio runtime"
        ),
    }
}

/// What guards one call that waits: its time limit and the caller's cancellation, borrowed for
/// the call. The guarded future is boxed once, together with the tool's own future.
pub struct Guard<'a> {
    tool: &'a str,
    timeout: Option<Duration>,
    cancellation: Option<&'a CancellationToken>,
    /// The call's own token, given to its context, when the call has a time limit.
    call_token: Option<CancellationToken>,
}

impl<'a> Guard<'a> {
    pub(crate) fn new(
        tool: &'a str,
        timeout: Option<Duration>,
        cancellation: Option<&'a CancellationToken>,
        call_token: Option<CancellationToken>,
    ) -> Self {
        Guard {
            tool,
            timeout,
            cancellation,
            call_token,
        }
    }

    /// The tool's future under this guard, in one box.
    pub fn boxed<F>(self, future: F) -> BoxFuture<'a, Result<ToolOutput, ToolError>>
    where
        F: Future<Output = Result<ToolOutput, ToolError>> + Send + 'a,
    {
        if self.timeout.is_none() && self.cancellation.is_none() {
            // Only panics to catch: no timer or token in the box.
            return Box::pin(async move {
                CatchUnwind::new(std::pin::pin!(future))
                    .await
                    .unwrap_or_else(|payload| Err(panicked(self.tool, &*payload)))
            });
        }
        Box::pin(guarded(
            self.tool,
            future,
            self.timeout,
            self.cancellation,
            self.call_token,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panics() -> Result<u8, ToolError> {
        panic!("boom")
    }

    #[test]
    fn a_sync_panic_is_panicked_and_a_result_passes_through() {
        let err = sync_call("t", panics).unwrap_err();
        assert!(
            matches!(&err, ToolError::Panicked { tool, message } if tool == "t" && message == "boom"),
            "{err:?}"
        );
        assert_eq!(sync_call("t", || Ok(7u8)).unwrap(), 7);
        let failed = ToolError::NotExecutable { tool: "t".into() };
        let err = sync_call::<u8>("t", || Err(failed)).unwrap_err();
        assert!(matches!(err, ToolError::NotExecutable { .. }), "{err:?}");
    }

    #[test]
    fn the_result_slot_holds_what_the_call_wrote_or_the_panic() {
        // A result larger than a word, as a tool's output is: the slot is read back whole.
        let text = "x".repeat(100);
        let out = sync_call_into("t", || Ok(ToolOutput::text(text.clone())), |r| r);
        assert_eq!(out.unwrap().to_text(), text);
        let err = sync_call_into("t", panics, |r| r.map(|_| ())).unwrap_err();
        assert!(matches!(err, ToolError::Panicked { .. }), "{err:?}");
    }

    #[tokio::test]
    async fn an_async_panic_is_panicked() {
        let future = async { panic!("later") };
        let err = Guard::new("t", None, None, None)
            .boxed(future)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ToolError::Panicked { message, .. } if message == "later"),
            "{err:?}"
        );
        let token = CancellationToken::new();
        let future = async { panic!("guarded") };
        let err = guarded("t", future, None, Some(&token), None)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Panicked { .. }), "{err:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_call_is_timed_out() {
        let slow = async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(ToolOutput::empty())
        };
        let limit = Duration::from_millis(50);
        let err = Guard::new("t", Some(limit), None, None)
            .boxed(slow)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ToolError::TimedOut { after, .. } if after == limit),
            "{err:?}"
        );
        let quick = async { Ok(ToolOutput::text("done")) };
        let out = guarded("t", quick, Some(limit), None, None).await.unwrap();
        assert_eq!(out.to_text(), "done");
    }

    #[tokio::test]
    async fn a_cancelled_call_is_cancelled_and_its_future_dropped() {
        struct Dropped(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let witness = Dropped(dropped.clone());
        let token = CancellationToken::new();
        let never = async move {
            let _witness = witness;
            std::future::pending::<()>().await;
            Ok(ToolOutput::empty())
        };
        let call = Guard::new("t", None, Some(&token), None).boxed(never);
        token.cancel();
        let err = call.await.unwrap_err();
        assert!(matches!(err, ToolError::Cancelled { .. }), "{err:?}");
        assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn a_time_limit_outside_a_runtime_is_misconfigured() {
        let err = check_timer("t", Duration::from_secs(1)).unwrap_err();
        assert!(matches!(err, ToolError::Misconfigured { .. }), "{err:?}");
    }

    /// The call's own token is cancelled when the tool did not finish (its time limit
    /// passed), not when it finished with an error of that kind (from a call it made itself).
    #[tokio::test(start_paused = true)]
    async fn the_call_token_is_cancelled_only_for_a_tool_that_did_not_finish() {
        let token = CancellationToken::new();
        let inner = ToolError::TimedOut {
            tool: "inner".into(),
            after: Duration::from_secs(1),
        };
        let own_error = async { Err(inner) };
        let limit = Some(Duration::from_secs(60));
        let result = guarded("t", own_error, limit, None, Some(token.clone())).await;
        assert!(matches!(result, Err(ToolError::TimedOut { tool, .. }) if tool == "inner"));
        assert!(!token.is_cancelled());
        let token = CancellationToken::new();
        let never = std::future::pending::<Result<ToolOutput, ToolError>>();
        let limit = Some(Duration::from_millis(5));
        let result = guarded("t", never, limit, None, Some(token.clone())).await;
        assert!(matches!(result, Err(ToolError::TimedOut { tool, .. }) if tool == "t"));
        assert!(token.is_cancelled());
    }
}
