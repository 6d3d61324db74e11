//! Panics, timeouts, cancellation, size caps and concurrency: the executor keeps serving.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use std::future::Future;
use std::task::{Context, Poll, Waker};

mod common;

use ai_tool::prelude::*;
use serde_json::json;

use common::tools::serving;

/// How many `wait_for_cancel` calls saw their cancellation.
static STOPPED: AtomicUsize = AtomicUsize::new(0);

/// How many tasks of `spawn_and_sleep` saw their call's cancellation.
static SPAWNED_STOPPED: AtomicUsize = AtomicUsize::new(0);

/// How many `hold` calls are on a thread.
static HOLDING: AtomicUsize = AtomicUsize::new(0);

/// Waits, without a bound on speed, for `counter` to reach one: a liveness check that fails
/// after a minute rather than hanging.
async fn eventually_one(counter: &AtomicUsize) {
    for _ in 0..6_000 {
        if counter.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never happened");
}

pub struct Risky {
    completed: AtomicUsize,
}

#[ai_tools]
impl Risky {
    /// Panics on purpose.
    #[ai_tool]
    fn explode(&self, message: String) -> String {
        panic!("{message}")
    }

    /// Panics on purpose, asynchronously.
    #[ai_tool]
    async fn explode_later(&self) -> String {
        tokio::task::yield_now().await;
        panic!("async boom")
    }

    /// Sleeps.
    #[ai_tool(timeout = "50ms")]
    async fn slow(&self, millis: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(millis)).await;
        millis
    }

    /// Sleeps with no limit of its own.
    #[ai_tool]
    async fn nap(&self, millis: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(millis)).await;
        millis
    }

    /// Blocks a thread.
    #[ai_tool(timeout = "50ms")]
    fn blocking(&self, millis: u64) -> u64 {
        std::thread::sleep(Duration::from_millis(millis));
        millis
    }

    /// Blocks its thread until its call is cancelled, then counts itself stopped.
    #[ai_tool(timeout = "50ms")]
    fn wait_for_cancel(&self, ctx: &ToolContext) -> String {
        while !ctx.is_cancelled() {
            std::thread::sleep(Duration::from_millis(5));
        }
        STOPPED.fetch_add(1, Ordering::SeqCst);
        "stopped".into()
    }

    /// Spawns a task that waits for the call's cancellation, then sleeps past its limit.
    #[ai_tool(timeout = "50ms")]
    async fn spawn_and_sleep(&self, ctx: &ToolContext) -> String {
        let ctx = ctx.to_static();
        tokio::spawn(async move {
            ctx.cancellation_token().cancelled().await;
            SPAWNED_STOPPED.fetch_add(1, Ordering::SeqCst);
        });
        tokio::time::sleep(Duration::from_secs(3_600)).await;
        "slept".into()
    }

    /// Gives up on itself through its context, then would wait forever.
    #[ai_tool]
    async fn give_up(&self, ctx: &ToolContext) -> String {
        assert!(!ctx.is_cancelled());
        ctx.cancellation_token().cancel();
        std::future::pending::<String>().await
    }

    /// Counts a call after yielding.
    #[ai_tool]
    async fn count(&self, n: u32) -> u32 {
        tokio::task::yield_now().await;
        self.completed.fetch_add(1, Ordering::SeqCst);
        n
    }

    /// Takes any text.
    #[ai_tool]
    fn echo(&self, text: String) -> String {
        text
    }

    /// Counts a call, on the blocking pool under a time limit.
    #[ai_tool(timeout = "5s")]
    fn count_blocking(&self) -> usize {
        self.completed.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Counts a call, on the blocking pool under a short time limit.
    #[ai_tool(timeout = "50ms")]
    fn count_briefly(&self) -> usize {
        self.completed.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Holds its blocking thread past its time limit.
    #[ai_tool(timeout = "50ms")]
    fn hold(&self) -> u32 {
        HOLDING.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        0
    }
}

fn executor() -> Executor {
    serving(Risky {
        completed: AtomicUsize::new(0),
    })
}

#[tokio::test]
async fn a_panicking_sync_tool_is_an_error_and_the_executor_goes_on() {
    let exec = executor();
    let err = exec
        .execute("explode", json!({ "message": "kaboom" }))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Panicked { message, .. } if message == "kaboom"),
        "{err:?}"
    );
    assert!(
        !err.to_model_text().contains("kaboom"),
        "panic text is not shown to the model"
    );
    assert_eq!(
        exec.execute("echo", json!({ "text": "still here" }))
            .await
            .unwrap()
            .to_text(),
        "still here"
    );
}

#[tokio::test]
async fn a_panicking_async_tool_is_an_error_and_the_executor_goes_on() {
    let exec = executor();
    let err = exec.execute("explode_later", json!({})).await.unwrap_err();
    assert!(
        matches!(&err, ToolError::Panicked { message, .. } if message == "async boom"),
        "{err:?}"
    );
    assert_eq!(
        exec.execute("count", json!({ "n": 1 }))
            .await
            .unwrap()
            .to_text(),
        "1"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_past_its_own_timeout_times_out() {
    let exec = executor();
    let err = exec
        .execute("slow", json!({ "millis": 10_000 }))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::TimedOut { after, .. } if after == Duration::from_millis(50)),
        "{err:?}"
    );
    assert_eq!(
        exec.execute("slow", json!({ "millis": 10 }))
            .await
            .unwrap()
            .to_text(),
        "10"
    );
}

#[tokio::test(start_paused = true)]
async fn the_executor_default_timeout_applies_to_tools_without_one() {
    let exec = Executor::builder()
        .service(Arc::new(Risky {
            completed: AtomicUsize::new(0),
        }))
        .default_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let err = exec
        .execute("nap", json!({ "millis": 5_000 }))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::TimedOut { after, .. } if after == Duration::from_secs(1)),
        "{err:?}"
    );
    let err = exec
        .execute("slow", json!({ "millis": 500 }))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::TimedOut { after, .. } if after == Duration::from_millis(50)),
        "own limit wins"
    );
}

#[tokio::test]
async fn a_blocking_sync_tool_with_a_timeout_runs_off_the_runtime_and_times_out() {
    let exec = executor();
    let err = exec
        .execute("blocking", json!({ "millis": 400 }))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut { .. }), "{err:?}");
    assert_eq!(
        exec.execute("blocking", json!({ "millis": 1 }))
            .await
            .unwrap()
            .to_text(),
        "1"
    );
}

#[tokio::test]
async fn cancelling_the_token_stops_the_call() {
    let exec = executor();
    let token = CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    let call = exec.execute_with("nap", json!({ "millis": 60_000 }), &options);
    let canceller = async {
        tokio::task::yield_now().await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    assert!(
        matches!(result, Err(ToolError::Cancelled { .. })),
        "{result:?}"
    );
}

/// A sync tool on the blocking pool keeps its thread after its call timed out unless told:
/// its context's token is cancelled when the limit passes, and the caller's token is not.
#[tokio::test]
async fn a_timed_out_sync_tool_is_told_through_its_context_and_the_callers_token_is_not() {
    let exec = executor();
    let token = CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    let err = exec
        .execute_with("wait_for_cancel", json!({}), &options)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut { .. }), "{err:?}");
    eventually_one(&STOPPED).await;
    assert!(!token.is_cancelled(), "the caller's token is the caller's");
}

/// A task an async tool spawned with its context hears that the call timed out.
#[tokio::test]
async fn a_task_spawned_by_a_timed_out_tool_is_told() {
    let exec = executor();
    let err = exec
        .execute("spawn_and_sleep", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut { .. }), "{err:?}");
    eventually_one(&SPAWNED_STOPPED).await;
}

#[tokio::test]
async fn a_call_with_an_already_cancelled_token_does_not_start() {
    let exec = executor();
    let token = CancellationToken::new();
    token.cancel();
    let options = CallOptions::default().with_cancellation(token);
    let result = exec
        .execute_with("count", json!({ "n": 1 }), &options)
        .await;
    assert!(
        matches!(result, Err(ToolError::Cancelled { .. })),
        "{result:?}"
    );
    assert_eq!(
        exec.services()
            .get::<Risky>()
            .unwrap()
            .completed
            .load(Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn the_context_token_is_the_callers_token() {
    let exec = executor();
    let token = CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    let result = exec.execute_with("give_up", json!({}), &options).await;
    assert!(
        matches!(result, Err(ToolError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(token.is_cancelled());
}

#[tokio::test]
async fn a_call_without_a_token_gets_its_own_and_cannot_cancel_others() {
    let exec = executor();
    let give_up = exec.execute("give_up", json!({}));
    let timed = tokio::time::timeout(Duration::from_millis(50), give_up).await;
    assert!(
        timed.is_err(),
        "no caller token: nothing watches the tool's own token"
    );
    assert_eq!(
        exec.execute("count", json!({ "n": 3 }))
            .await
            .unwrap()
            .to_text(),
        "3"
    );
}

#[tokio::test]
async fn arguments_over_the_size_cap_are_refused() {
    let exec = Executor::builder()
        .service(Arc::new(Risky {
            completed: AtomicUsize::new(0),
        }))
        .max_argument_bytes(1_000)
        .build()
        .unwrap();
    let big = "x".repeat(2_000);
    let err = exec
        .execute("echo", json!({ "text": big }))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::ArgumentsTooLarge { limit: 1_000, .. }),
        "{err:?}"
    );
    let text = format!(r#"{{"text":"{big}"}}"#);
    let err = exec.execute("echo", text.as_str()).await.unwrap_err();
    assert!(
        matches!(err, ToolError::ArgumentsTooLarge { size: 2011, .. }),
        "{err:?}"
    );
    assert!(exec
        .execute("echo", json!({ "text": "small" }))
        .await
        .is_ok());
}

#[tokio::test]
async fn the_default_size_cap_is_one_mebibyte() {
    let exec = executor();
    let err = exec
        .execute("echo", json!({ "text": "x".repeat(1 << 20) }))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ToolError::ArgumentsTooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_all_complete_in_order() {
    let exec = executor();
    let mut handles = Vec::new();
    for n in 0..1_000u32 {
        let exec = exec.clone();
        handles.push(tokio::spawn(async move {
            exec.execute("count", json!({ "n": n })).await
        }));
    }
    for (n, handle) in handles.into_iter().enumerate() {
        let out = handle.await.expect("task joins").expect("call succeeds");
        assert_eq!(out.to_text(), n.to_string());
    }
    assert_eq!(
        exec.services()
            .get::<Risky>()
            .unwrap()
            .completed
            .load(Ordering::SeqCst),
        1_000
    );
}

/// A tokio runtime built without its time driver.
fn runtime_without_timers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

#[test]
fn a_time_limit_on_a_runtime_without_timers_is_misconfigured_and_nothing_runs() {
    let risky = Arc::new(Risky {
        completed: AtomicUsize::new(0),
    });
    let exec = Executor::builder().service(risky.clone()).build().unwrap();
    let runtime = runtime_without_timers();
    for tool in ["count_blocking", "slow", "nap"] {
        let args = if tool == "count_blocking" {
            json!({})
        } else {
            json!({ "millis": 1 })
        };
        let err = runtime.block_on(exec.execute(tool, args)).unwrap_err();
        if tool == "nap" {
            // No limit of its own and no default: it needs no timer, and a sleep fails inside
            // the tool as a caught panic.
            assert_eq!(err.kind(), ToolErrorKind::Panicked, "{err}");
            continue;
        }
        assert_eq!(err.kind(), ToolErrorKind::Misconfigured, "{tool}: {err}");
        assert!(err.to_string().contains("enable_time"), "{err}");
        assert!(err.to_model_text().contains("server side"), "{err:?}");
    }
    assert_eq!(risky.completed.load(Ordering::SeqCst), 0, "no tool ran");
    let out = runtime
        .block_on(exec.execute("echo", json!({ "text": "still serving" })))
        .unwrap();
    assert_eq!(out.to_text(), "still serving");
}

#[test]
fn a_call_with_a_time_limit_polled_outside_any_runtime_is_misconfigured() {
    let exec = executor();
    for tool in ["count_blocking", "slow"] {
        let args = if tool == "slow" {
            json!({ "millis": 1 })
        } else {
            json!({})
        };
        let mut call = std::pin::pin!(exec.execute(tool, args));
        let mut cx = Context::from_waker(Waker::noop());
        match call.as_mut().poll(&mut cx) {
            Poll::Ready(Err(err)) => {
                assert_eq!(err.kind(), ToolErrorKind::Misconfigured, "{err}");
                assert!(err.to_string().contains("tokio runtime"), "{err}");
            }
            Poll::Ready(Ok(out)) => panic!("{tool} ran: {out:?}"),
            Poll::Pending => panic!("{tool} is waiting for a timer it cannot have"),
        }
    }
}

/// A sync tool whose call timed out while it waited for a blocking thread never runs: the
/// model was told it timed out, and its side effects would come after.
#[test]
fn a_sync_call_that_timed_out_waiting_for_a_thread_never_runs() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let exec = executor();
        let holding = tokio::spawn({
            let exec = exec.clone();
            async move { exec.execute("hold", json!({})).await }
        });
        eventually_one(&HOLDING).await;
        // Queued behind `hold` on the one blocking thread, it times out there.
        let waited = exec.execute("count_briefly", json!({})).await.unwrap_err();
        assert!(matches!(waited, ToolError::TimedOut { .. }), "{waited:?}");
        assert!(holding.await.unwrap().is_err());
        // Queued after it: when this one ran, the one before had its turn.
        let after = exec.execute("count_blocking", json!({})).await.unwrap();
        assert_eq!(
            after.to_text(),
            "1",
            "the timed-out call did not count itself"
        );
    });
}

/// A sync tool that sleeps with no limit of its own: under the executor's default limit, it
/// runs on the blocking pool.
#[ai_tool]
fn sleepy() -> u64 {
    std::thread::sleep(Duration::from_millis(2_000));
    1
}

/// 600 calls of a sync tool that sleeps, each timing out under the executor's default limit:
/// they take at most `max_blocking_calls` of tokio's blocking threads, the metrics count the
/// ones still held, and `spawn_blocking(|| ())` (what DNS lookups and file reads use) still
/// answers at once.
#[test]
fn stuck_sync_calls_leave_the_blocking_pool_to_everyone_else() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(128)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let exec = Executor::builder()
            .default_timeout(Duration::from_millis(100))
            .max_blocking_calls(32)
            .build()
            .unwrap();
        let calls: Vec<_> = (0..600)
            .map(|_| {
                let exec = exec.clone();
                tokio::spawn(async move { exec.execute("sleepy", json!({})).await })
            })
            .collect();
        for call in calls {
            let error = call.await.unwrap().unwrap_err();
            assert!(matches!(error, ToolError::TimedOut { .. }), "{error:?}");
        }
        let metrics = exec.metrics();
        assert_eq!(metrics.max_blocking_calls, 32);
        assert!(metrics.blocking_calls <= 32, "{metrics:?}");
        assert!(metrics.abandoned_blocking_calls > 0, "{metrics:?}");
        assert!(
            metrics.abandoned_blocking_calls <= metrics.blocking_calls,
            "{metrics:?}"
        );
        let free =
            tokio::time::timeout(Duration::from_secs(1), tokio::task::spawn_blocking(|| ())).await;
        assert!(free.is_ok(), "the blocking pool is stuck: {metrics:?}");
        // Once the tools return, nothing is held.
        for _ in 0..600 {
            if exec.metrics().blocking_calls == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let after = exec.metrics();
        assert_eq!(
            (after.blocking_calls, after.abandoned_blocking_calls),
            (0, 0),
            "{after:?}"
        );
    });
}

/// Free `#[ai_tool]` functions are exposed as the builder says; a given service's methods
/// always are; `selectable_where` marks tools for a retriever.
#[test]
fn free_tools_are_exposed_only_as_the_builder_says() {
    let all = Executor::builder().build().unwrap();
    assert!(all.spec("sleepy").is_some(), "every free tool by default");
    let none = Executor::builder().no_free_tools().build().unwrap();
    assert!(none.spec("sleepy").is_none());
    let here = Executor::builder()
        .free_tools_where(|_name, module| module == module_path!())
        .build()
        .unwrap();
    assert!(here.spec("sleepy").is_some());
    let elsewhere = Executor::builder()
        .free_tools_where(|_name, module| module.starts_with("another_crate::"))
        .build()
        .unwrap();
    assert!(elsewhere.spec("sleepy").is_none());
    let methods = Executor::builder()
        .service(Arc::new(Risky {
            completed: AtomicUsize::new(0),
        }))
        .no_free_tools()
        .build()
        .unwrap();
    assert!(methods.spec("explode").is_some() && methods.spec("sleepy").is_none());
    let marked = Executor::builder()
        .selectable_where(|spec| spec.name == "sleepy")
        .build()
        .unwrap();
    assert!(marked.spec("sleepy").unwrap().metadata.selectable);
    assert!(marked
        .tools()
        .filter(|s| s.name != "sleepy")
        .all(|s| !s.metadata.selectable));
}
