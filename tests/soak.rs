//! The soak test: many calls from many concurrent tasks, mixing valid, invalid, failing,
//! panicking, slow (time-limited) and cancelled calls over sync, async and dynamic tools. Every
//! call must get exactly one result of the kind its case expects, every tool must have run
//! exactly as often as its cases say, the executor must serve correctly afterwards, and resident
//! memory after the run must be within 10% of what it was after a warm-up (no leak).
//!
//! Its size comes from the environment, so that the test script runs a bounded version and a
//! longer one is one command (see docs/reliability.md):
//!
//! ```sh
//! AI_TOOL_SOAK_CALLS=1000000 AI_TOOL_SOAK_TASKS=64 cargo test --release --test soak -- --nocapture
//! ```
//!
//! Defaults: 20,000 calls from 64 tasks, after a warm-up of a fifth as many, at least 50,000
//! (`AI_TOOL_SOAK_WARM_UP` sets it): the allocator's arenas and the blocking pool's threads
//! reach their steady size in the warm-up, so that what the run adds is what it leaks.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ai_tool::prelude::*;
use ai_tool::ToolMetadata;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// How often each call id's tool body ran.
static RAN: OnceLock<Vec<AtomicU8>> = OnceLock::new();

fn ran(id: u64) {
    if let Some(slot) = RAN.get().and_then(|ran| ran.get(id as usize)) {
        slot.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a tool does with a call.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Answers with the id.
    Answer,
    /// Fails with an error.
    Fail,
    /// Panics.
    Panic,
    /// Never finishes: only a time limit or a cancellation ends it.
    Hang,
}

/// A sync tool, read by the Exact stage.
#[ai_tool]
fn soak_sync(id: u64, panic: bool) -> Result<u64, String> {
    ran(id);
    if panic {
        panic!("soak_sync panics on purpose");
    }
    Ok(id)
}

/// A sync tool whose arguments the Validating stage reads, which fails when asked.
#[ai_tool]
fn soak_sync_mode(id: u64, mode: Mode) -> Result<u64, String> {
    ran(id);
    match mode {
        Mode::Answer => Ok(id),
        Mode::Fail => Err(format!("call {id} fails on purpose")),
        Mode::Panic | Mode::Hang => panic!("soak_sync_mode panics on purpose"),
    }
}

/// A sync tool with its own time limit, run on the blocking pool: sleeping past the limit is
/// a time-out (the limit is generous, so that an answer is never late on a loaded machine).
#[ai_tool(timeout = "250ms")]
fn soak_sync_limited(id: u64, sleep_ms: u64) -> u64 {
    ran(id);
    std::thread::sleep(Duration::from_millis(sleep_ms));
    id
}

/// An async tool.
#[ai_tool]
async fn soak_async(id: u64, mode: Mode) -> Result<u64, String> {
    ran(id);
    match mode {
        Mode::Answer => Ok(id),
        Mode::Fail => Err(format!("call {id} fails on purpose")),
        Mode::Panic => panic!("soak_async panics on purpose"),
        Mode::Hang => std::future::pending().await,
    }
}

/// An async tool that never finishes within its time limit.
#[ai_tool(timeout = "5ms")]
async fn soak_async_slow(id: u64) -> u64 {
    ran(id);
    std::future::pending::<()>().await;
    id
}

fn dynamic_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "integer", "minimum": 0 },
            "mode": { "enum": ["answer", "fail", "panic", "hang"] }
        },
        "required": ["id", "mode"],
        "additionalProperties": false
    })
}

/// A dynamic tool doing what `mode` says; `limit` is its own time limit.
fn dynamic_tool(name: &str, limit: Option<u64>) -> DynamicTool {
    let tool = DynamicTool::new(name, "Soaks", dynamic_schema(), |args, _ctx| async move {
        let id = args["id"].as_u64().unwrap_or(u64::MAX);
        ran(id);
        match args["mode"].as_str() {
            Some("answer") => Ok(ToolOutput::text(id.to_string())),
            Some("fail") => Err(ToolError::failed("soak_dynamic", "fails on purpose")),
            Some("panic") => panic!("soak_dynamic panics on purpose"),
            _ => std::future::pending().await,
        }
    });
    tool.with_metadata(ToolMetadata {
        timeout_ms: limit,
        ..ToolMetadata::default()
    })
}

/// How a case's call is made.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cancel {
    No,
    /// The token is cancelled before the call.
    Before,
    /// The token is cancelled once the tool is running.
    During,
}

/// One kind of call: which tool, with which arguments, and what must come back.
#[derive(Clone, Copy)]
struct Case {
    tool: &'static str,
    args: fn(u64) -> Value,
    cancel: Cancel,
    /// `Ok` when the call answers with its id.
    expected: Result<(), ToolErrorKind>,
    /// How often the tool body runs.
    runs: u8,
}

fn cases() -> Vec<Case> {
    use ToolErrorKind as K;
    let case = |tool, args, cancel, expected, runs| Case {
        tool,
        args,
        cancel,
        expected,
        runs,
    };
    vec![
        // Sync, Exact stage.
        case(
            "soak_sync",
            |id| json!({ "id": id, "panic": false }),
            Cancel::No,
            Ok(()),
            1,
        ),
        case(
            "soak_sync",
            |id| json!({ "id": id, "panic": true }),
            Cancel::No,
            Err(K::Panicked),
            1,
        ),
        case(
            "soak_sync",
            |id| json!({ "id": id.to_string(), "panic": false }),
            Cancel::No,
            Err(K::InvalidArguments),
            0,
        ),
        case(
            "soak_sync",
            |id| json!({ "id": id, "panic": false, "extra": 1 }),
            Cancel::No,
            Err(K::InvalidArguments),
            0,
        ),
        // Sync, Validating stage.
        case(
            "soak_sync_mode",
            |id| json!({ "id": id, "mode": "answer" }),
            Cancel::No,
            Ok(()),
            1,
        ),
        case(
            "soak_sync_mode",
            |id| json!({ "id": id, "mode": "fail" }),
            Cancel::No,
            Err(K::Failed),
            1,
        ),
        case(
            "soak_sync_mode",
            |id| json!({ "id": id, "mode": "panic" }),
            Cancel::No,
            Err(K::Panicked),
            1,
        ),
        case(
            "soak_sync_mode",
            |id| json!({ "id": id, "mode": "swim" }),
            Cancel::No,
            Err(K::InvalidArguments),
            0,
        ),
        case(
            "soak_sync_mode",
            |id| json!({ "id": id, "mode": "answer" }),
            Cancel::Before,
            Err(K::Cancelled),
            0,
        ),
        // Sync on the blocking pool, with a time limit.
        case(
            "soak_sync_limited",
            |id| json!({ "id": id, "sleep_ms": 0 }),
            Cancel::No,
            Ok(()),
            1,
        ),
        // Async.
        case(
            "soak_async",
            |id| json!({ "id": id, "mode": "answer" }),
            Cancel::No,
            Ok(()),
            1,
        ),
        case(
            "soak_async",
            |id| json!({ "id": id, "mode": "fail" }),
            Cancel::No,
            Err(K::Failed),
            1,
        ),
        case(
            "soak_async",
            |id| json!({ "id": id, "mode": "panic" }),
            Cancel::No,
            Err(K::Panicked),
            1,
        ),
        case(
            "soak_async",
            |id| json!({ "id": id, "mode": 7 }),
            Cancel::No,
            Err(K::InvalidArguments),
            0,
        ),
        case(
            "soak_async",
            |id| json!({ "id": id, "mode": "hang" }),
            Cancel::During,
            Err(K::Cancelled),
            1,
        ),
        case(
            "soak_async",
            |id| json!({ "id": id, "mode": "answer" }),
            Cancel::Before,
            Err(K::Cancelled),
            0,
        ),
        case(
            "soak_async_slow",
            |id| json!({ "id": id }),
            Cancel::No,
            Err(K::TimedOut),
            1,
        ),
        // Dynamic.
        case(
            "soak_dynamic",
            |id| json!({ "id": id, "mode": "answer" }),
            Cancel::No,
            Ok(()),
            1,
        ),
        case(
            "soak_dynamic",
            |id| json!({ "id": id, "mode": "fail" }),
            Cancel::No,
            Err(K::Failed),
            1,
        ),
        case(
            "soak_dynamic",
            |id| json!({ "id": id, "mode": "panic" }),
            Cancel::No,
            Err(K::Panicked),
            1,
        ),
        case(
            "soak_dynamic",
            |id| json!({ "id": -1, "mode": "answer", "n": id }),
            Cancel::No,
            Err(K::InvalidArguments),
            0,
        ),
        case(
            "soak_dynamic",
            |id| json!({ "id": id, "mode": "hang" }),
            Cancel::During,
            Err(K::Cancelled),
            1,
        ),
        case(
            "soak_dynamic_slow",
            |id| json!({ "id": id, "mode": "hang" }),
            Cancel::No,
            Err(K::TimedOut),
            1,
        ),
        // No such tool.
        case(
            "soak_nothing",
            |id| json!({ "id": id }),
            Cancel::No,
            Err(K::UnknownTool),
            0,
        ),
    ]
}

/// The rare, slow case: a sync tool that sleeps past its time limit on the blocking pool. One
/// call in [`SLOW_SYNC_EVERY`] is one.
const SLOW_SYNC_EVERY: u64 = 128;

fn slow_sync_case() -> Case {
    Case {
        tool: "soak_sync_limited",
        args: |id| json!({ "id": id, "sleep_ms": 400 }),
        cancel: Cancel::No,
        expected: Err(ToolErrorKind::TimedOut),
        runs: 1,
    }
}

/// The case of call `id`: picked by a hash of the id, so that each task (which takes every
/// `tasks`-th id) gets a mix of every case, the slow ones spread evenly.
fn case_of(id: u64, cases: &[Case]) -> Case {
    let hash = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    if hash % SLOW_SYNC_EVERY == 0 {
        slow_sync_case()
    } else {
        cases[(hash / SLOW_SYNC_EVERY % cases.len() as u64) as usize]
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {text:?}")),
        Err(_) => default,
    }
}

/// Resident memory, in bytes, from `/proc/self/statm`.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("the resident field");
    pages * 4096
}

/// What one case's call came to, compared with what it must.
async fn run_one(exec: &Executor, case: &Case, id: u64) -> Result<(), String> {
    let args = (case.args)(id);
    let token = CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    if case.cancel == Cancel::Before {
        token.cancel();
    }
    let result = if case.cancel == Cancel::During {
        let call = exec.execute_with(case.tool, args, &options);
        let cancel = async {
            // The call is polled first: by now the tool runs and waits.
            tokio::task::yield_now().await;
            token.cancel();
        };
        tokio::join!(call, cancel).0
    } else {
        exec.execute_with(case.tool, args, &options).await
    };
    match (&case.expected, result) {
        (Ok(()), Ok(out)) if out.to_text() == id.to_string() => Ok(()),
        (Err(kind), Err(err)) if err.kind() == *kind => Ok(()),
        (expected, got) => Err(format!(
            "call {id} to {}: expected {expected:?}, got {got:?}",
            case.tool
        )),
    }
}

/// Runs calls `first..first + count` from `tasks` tasks; every result is checked and counted.
async fn run(exec: &Arc<Executor>, first: u64, count: u64, tasks: u64) -> Vec<String> {
    let answered = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for task in 0..tasks {
        let exec = Arc::clone(exec);
        let answered = Arc::clone(&answered);
        handles.push(tokio::spawn(async move {
            let cases = cases();
            let mut wrong = Vec::new();
            let mut id = first + task;
            while id < first + count {
                if let Err(e) = run_one(&exec, &case_of(id, &cases), id).await {
                    wrong.push(e);
                }
                answered.fetch_add(1, Ordering::Relaxed);
                id += tasks;
            }
            wrong
        }));
    }
    let mut wrong = Vec::new();
    for handle in handles {
        wrong.extend(handle.await.expect("a soak task ends without panicking"));
    }
    assert_eq!(
        answered.load(Ordering::Relaxed) as u64,
        count,
        "every call answered once"
    );
    wrong
}

/// Checks that every call's tool ran exactly as often as its case says.
fn check_runs(first: u64, count: u64) {
    let cases = cases();
    let ran = RAN.get().expect("set up");
    let mut wrong = Vec::new();
    for id in first..first + count {
        let case = case_of(id, &cases);
        let runs = ran[id as usize].load(Ordering::Relaxed);
        if runs != case.runs {
            wrong.push(format!(
                "call {id} to {}: ran {runs} times, not {}",
                case.tool, case.runs
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_mix_of_calls_loses_none_and_leaks_nothing() {
    ai_tool::silence_caught_panics();
    let calls = env_or("AI_TOOL_SOAK_CALLS", 20_000);
    let tasks = env_or("AI_TOOL_SOAK_TASKS", 64);
    let warm_up = env_or("AI_TOOL_SOAK_WARM_UP", (calls / 5).max(50_000));
    let ran = RAN.get_or_init(|| (0..warm_up + calls).map(|_| AtomicU8::new(0)).collect());
    // Written once now, so that its pages are resident before memory is first read: the
    // allocator may hand out fresh zeroed pages, which become resident only when first written,
    // and that would look like a leak of a byte per call.
    for slot in ran {
        slot.store(0, Ordering::Relaxed);
    }
    let exec = Arc::new(
        Executor::builder()
            .tool(dynamic_tool("soak_dynamic", None))
            .tool(dynamic_tool("soak_dynamic_slow", Some(5)))
            .default_timeout(Duration::from_secs(60))
            .build()
            .expect("the executor builds"),
    );

    let wrong = run(&exec, 0, warm_up, tasks).await;
    assert!(
        wrong.is_empty(),
        "warm-up: {} wrong: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
    // Let the blocking pool's sleepers finish, as they will after the run.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = resident_bytes();

    // In ten rounds, resident memory read after each: a leak grows round after round.
    let started = std::time::Instant::now();
    let mut rounds = Vec::new();
    let mut done = 0;
    for round in 1..=10 {
        let end = calls * round / 10;
        let wrong = run(&exec, warm_up + done, end - done, tasks).await;
        assert!(
            wrong.is_empty(),
            "{} wrong: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
        done = end;
        rounds.push(format!("{:.1}", resident_bytes() as f64 / (1 << 20) as f64));
    }
    let took = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = resident_bytes();
    println!(
        "soak: resident memory after each tenth of the run, MiB: {}",
        rounds.join(", ")
    );
    check_runs(0, warm_up + calls);

    // The executor serves correctly afterwards.
    let out = exec
        .execute("soak_sync", json!({ "id": 0, "panic": false }))
        .await
        .expect("serves after the soak");
    assert_eq!(out.to_text(), "0");

    println!(
        "soak: {calls} calls from {tasks} tasks in {:.1} s, lost 0; resident memory {:.1} MiB after warm-up, {:.1} MiB after the run ({:+.1}%)",
        took.as_secs_f64(),
        before as f64 / (1 << 20) as f64,
        after as f64 / (1 << 20) as f64,
        (after as f64 / before as f64 - 1.0) * 100.0
    );
    assert!(
        after as f64 <= before as f64 * 1.10,
        "resident memory grew from {before} to {after} bytes"
    );
}
