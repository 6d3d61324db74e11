use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tool_core::{SafetyHints, ToolError, ToolMetadata, ToolOutput};

use super::*;
use crate::{BuildProblem, CallOptions, DynamicTool};

fn object() -> Value {
    json!({"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}})
}

/// A tool that answers with its name and arguments, counting its calls.
fn counted(name: &'static str, calls: &Arc<AtomicUsize>) -> DynamicTool {
    let calls = Arc::clone(calls);
    DynamicTool::new(name, "A test tool", object(), move |args, _| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move { Ok(ToolOutput::text(format!("{name} {args}"))) }
    })
}

fn hinted(tool: DynamicTool, hints: SafetyHints) -> DynamicTool {
    let metadata = ToolMetadata {
        hints,
        ..tool.spec().metadata.clone()
    };
    tool.with_metadata(metadata)
}

fn idempotent() -> SafetyHints {
    SafetyHints {
        idempotent: Some(true),
        ..SafetyHints::default()
    }
}

fn names(exec: &Executor) -> Vec<&str> {
    exec.tools().map(|t| t.name.as_str()).collect()
}

struct Caller(&'static str);

#[tokio::test]
async fn an_executors_tools_are_called_there_with_the_callers_options() {
    let inner = Executor::builder()
        .registered_tools(false)
        .tool(DynamicTool::new(
            "who",
            "Says who calls",
            object(),
            |_, ctx| async move {
                let caller = ctx.extension::<Caller>().map_or("nobody", |c| c.0);
                Ok(ToolOutput::text(format!("{caller} as {:?}", ctx.call_id())))
            },
        ))
        .catalog([tool_core::CatalogEntry {
            spec: ToolSpec {
                name: "listed".into(),
                description: "Only declared".into(),
                parameters: object(),
                output_schema: None,
                metadata: ToolMetadata::default(),
            },
        }])
        .build()
        .unwrap();
    let exec = Toolset::of(&inner)
        .prefixed("svc_")
        .into_executor()
        .unwrap();
    assert_eq!(names(&exec), ["svc_who", "svc_listed"]);
    assert!(!exec.is_executable("svc_listed"));
    let options = CallOptions::default()
        .with_call_id("c-1")
        .with_extension(Caller("ada"));
    let out = exec.execute_with("svc_who", "{}", &options).await.unwrap();
    assert_eq!(out.to_text(), r#"ada as Some("c-1")"#);
    // The arguments are still checked against the schema.
    let bad = exec
        .execute("svc_who", r#"{"x": "one"}"#)
        .await
        .unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments { .. }), "{bad:?}");
}

#[tokio::test(start_paused = true)]
async fn giving_up_on_a_forwarded_call_cancels_the_call_inside() {
    let stopped = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&stopped);
    let inner = Executor::builder()
        .registered_tools(false)
        .tool(DynamicTool::new(
            "wait",
            "Waits",
            object(),
            move |_, ctx| {
                let seen = Arc::clone(&seen);
                // Work the tool hands to a task of its own, which only the token can stop.
                let token = ctx.cancellation_token().clone();
                let task = tokio::spawn(async move {
                    token.cancelled().await;
                    seen.fetch_add(1, Ordering::SeqCst);
                });
                async move {
                    let _ = task.await;
                    Ok(ToolOutput::text("stopped"))
                }
            },
        ))
        .build()
        .unwrap();
    let exec = Executor::builder()
        .registered_tools(false)
        .default_timeout(Duration::from_millis(50))
        .toolset(Toolset::of(&inner))
        .build()
        .unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    let call = exec.execute_with("wait", "{}", &options);
    let err = call.await.unwrap_err();
    assert!(matches!(err, ToolError::TimedOut { .. }), "{err:?}");
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        stopped.load(Ordering::SeqCst),
        1,
        "the inner call's token was cancelled"
    );
    assert!(
        !token.is_cancelled(),
        "the caller's own token is left alone"
    );
}

#[test]
fn sets_filter_rename_and_combine() {
    let calls = Arc::new(AtomicUsize::new(0));
    let a = Toolset::from_tools([counted("search", &calls), counted("delete", &calls)]);
    let b: Toolset = [hinted(
        counted("read", &calls),
        SafetyHints {
            read_only: Some(true),
            ..SafetyHints::default()
        },
    )]
    .into_iter()
    .collect();
    let set = a
        .without(["delete"])
        .renamed("search", "find")
        .renamed("absent", "ignored")
        .with(
            b.clone()
                .filter(|spec| spec.metadata.hints.read_only == Some(true)),
        );
    assert_eq!(format!("{set:?}"), r#"["find", "read"]"#);
    assert_eq!(set.len(), 2);
    let only = set.clone().only(["read", "nothing"]);
    assert_eq!(
        only.specs().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["read"]
    );
    assert!(Toolset::new().is_empty());
}

#[test]
fn a_name_twice_in_a_combined_set_fails_the_build_naming_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let set = Toolset::from_tools([counted("search", &calls)])
        .with(Toolset::from_tools([counted("search", &calls)]));
    let err = set.into_executor().unwrap_err();
    assert!(
        err.problems
            .iter()
            .any(|p| matches!(p, BuildProblem::DuplicateTool { name, .. } if name == "search")),
        "{err}"
    );
}

#[tokio::test]
async fn renamed_tools_reach_the_tool_they_were() {
    let calls = Arc::new(AtomicUsize::new(0));
    let exec = Toolset::from_tools([counted("search", &calls)])
        .prefixed("web_")
        .into_executor()
        .unwrap();
    let out = exec.execute("web_search", r#"{"x": 1}"#).await.unwrap();
    assert_eq!(out.to_text(), r#"search {"x":1}"#);
}

#[tokio::test]
async fn the_last_layer_runs_first_and_a_layer_may_answer_alone() {
    let calls = Arc::new(AtomicUsize::new(0));
    let order = Arc::new(Mutex::new(Vec::new()));
    let mark = |label: &'static str| {
        let order = Arc::clone(&order);
        layer_fn(move |_, args, ctx, next| {
            order.lock().unwrap().push(label);
            next.run(args, ctx)
        })
    };
    let refuse = layer_fn(|_, args: Value, ctx, next| async move {
        if args.get("x") == Some(&json!(0)) {
            return Err(ToolError::retry(ctx.tool_name(), "x must not be 0"));
        }
        next.run(args, ctx).await
    });
    let exec = Toolset::from_tools([counted("t", &calls)])
        .layer(mark("inner"))
        .layer(refuse)
        .layer(mark("outer"))
        .into_executor()
        .unwrap();
    exec.execute("t", r#"{"x": 1}"#).await.unwrap();
    assert_eq!(*order.lock().unwrap(), ["outer", "inner"]);
    let err = exec.execute("t", r#"{"x": 0}"#).await.unwrap_err();
    assert!(matches!(err, ToolError::Retry { .. }), "{err:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_panicking_layer_is_a_panicked_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let exec = Toolset::from_tools([counted("t", &calls)])
        .layer(layer_fn(|_, args, ctx, next| async move {
            if args.get("x") == Some(&json!(9)) {
                panic!("layer broke");
            }
            next.run(args, ctx).await
        }))
        .into_executor()
        .unwrap();
    let err = exec.execute("t", r#"{"x": 9}"#).await.unwrap_err();
    assert!(matches!(err, ToolError::Panicked { .. }), "{err:?}");
    exec.execute("t", r#"{"x": 1}"#).await.unwrap();
}

#[tokio::test]
async fn a_rate_limit_refuses_calls_over_it_saying_when_to_come_back() {
    let calls = Arc::new(AtomicUsize::new(0));
    let exec = Toolset::from_tools([counted("a", &calls), counted("b", &calls)])
        .layer(RateLimit::new(2, Duration::from_secs(60)))
        .into_executor()
        .unwrap();
    exec.execute("a", "{}").await.unwrap();
    exec.execute("b", "{}").await.unwrap();
    let err = exec.execute("a", "{}").await.unwrap_err();
    let refused = err
        .downcast_ref::<RateLimited>()
        .expect("a RateLimited error");
    assert_eq!(refused.calls, 2);
    assert!(refused.retry_after > Duration::from_secs(20), "{refused:?}");
    assert!(err.to_model_text().contains("try again in"), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_concurrency_limit_lets_that_many_calls_run_at_once() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (r, m) = (Arc::clone(&running), Arc::clone(&most));
    let slow = DynamicTool::new("slow", "Sleeps", object(), move |_, _| {
        let (r, m) = (Arc::clone(&r), Arc::clone(&m));
        async move {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(10)).await;
            r.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::text("done"))
        }
    });
    let exec = Toolset::from_tools([slow])
        .layer(ConcurrencyLimit::new(2))
        .into_executor()
        .unwrap();
    let calls = (0..6).map(|_| exec.execute("slow", "{}"));
    let results = futures_util::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(most.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_shared_cache_answers_repeated_calls_of_idempotent_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let plain = Arc::new(AtomicUsize::new(0));
    let cache = ResultCache::shared(Duration::from_secs(60));
    let exec = Toolset::from_tools([
        hinted(counted("rate", &calls), idempotent()),
        counted("send", &plain),
    ])
    .layer(cache.clone())
    .into_executor()
    .unwrap();
    let first = exec.execute("rate", r#"{"x": 1, "y": 2}"#).await.unwrap();
    let again = exec.execute("rate", r#"{"y": 2, "x": 1}"#).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the same arguments in another order"
    );
    exec.execute("rate", r#"{"x": 2}"#).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    exec.execute("send", "{}").await.unwrap();
    exec.execute("send", "{}").await.unwrap();
    assert_eq!(
        plain.load(Ordering::SeqCst),
        2,
        "a tool without the hint runs every time"
    );
    assert_eq!(cache.len(), 2);
}

#[tokio::test]
async fn a_cache_keeps_no_failures_nor_stale_nor_too_many_results() {
    let failing = DynamicTool::new("flaky", "Fails", object(), |_, _| async {
        Ok(ToolOutput::error("down"))
    });
    let cache = ResultCache::shared(Duration::from_secs(60)).max_entries(1);
    let calls = Arc::new(AtomicUsize::new(0));
    let exec = Toolset::from_tools([
        hinted(failing, idempotent()),
        hinted(counted("r", &calls), idempotent()),
    ])
    .layer(cache.clone())
    .into_executor()
    .unwrap();
    exec.execute("flaky", "{}").await.unwrap();
    assert!(cache.is_empty(), "an error result is not kept");
    for args in [r#"{"x": 1}"#, r#"{"x": 2}"#, r#"{"x": 1}"#] {
        exec.execute("r", args).await.unwrap();
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "the first result was pushed out"
    );
    assert_eq!(cache.len(), 1);

    let stale = ResultCache::shared(Duration::ZERO);
    let calls = Arc::new(AtomicUsize::new(0));
    let exec = Toolset::from_tools([hinted(counted("r", &calls), idempotent())])
        .layer(stale)
        .into_executor()
        .unwrap();
    exec.execute("r", "{}").await.unwrap();
    exec.execute("r", "{}").await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    let small = ResultCache::shared(Duration::from_secs(60)).max_entry_bytes(4);
    let exec = Toolset::from_tools([hinted(counted("big", &calls), idempotent())])
        .layer(small.clone())
        .into_executor()
        .unwrap();
    exec.execute("big", "{}").await.unwrap();
    assert!(
        small.is_empty(),
        "a result over max_entry_bytes is not kept"
    );
}

#[tokio::test]
async fn a_per_caller_cache_never_answers_one_caller_with_anothers_result() {
    let calls = Arc::new(AtomicUsize::new(0));
    let cache = ResultCache::per(Duration::from_secs(60), |ctx| {
        ctx.extension::<Caller>().map(|c| c.0.to_owned())
    });
    let exec = Toolset::from_tools([hinted(counted("mine", &calls), idempotent())])
        .layer(cache)
        .into_executor()
        .unwrap();
    let ada = CallOptions::default().with_extension(Caller("ada"));
    let bob = CallOptions::default().with_extension(Caller("bob"));
    for options in [&ada, &bob, &ada, &bob] {
        exec.execute_with("mine", "{}", options).await.unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // A call with no caller is not cached at all.
    exec.execute("mine", "{}").await.unwrap();
    exec.execute("mine", "{}").await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_call_log_passes_calls_through() {
    let calls = Arc::new(AtomicUsize::new(0));
    let exec = Toolset::from_tools([counted("t", &calls)])
        .layer(CallLog)
        .into_executor()
        .unwrap();
    let out = exec.execute("t", "{}").await.unwrap();
    assert_eq!(out.to_text(), "t {}");
}
