//! `execute()` against the floor, in the same run.
//!
//! The floor is what a hand-written dispatcher must do at least: deserialize the same JSON into
//! the argument struct, call the method, serialize the result. `execute()` adds the name lookup,
//! the size cap, schema validation and the protection around the call. Measured with 10 and with
//! 10,000 tools registered, to show that dispatch does not grow with the number of tools, and for
//! a tool without parameters, to show what a call costs apart from its arguments.
//!
//! `cargo bench --bench dispatch`

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use ai_tool::prelude::*;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use serde::Deserialize;
use serde_json::{json, Value};

pub struct Geo;

#[ai_tools]
impl Geo {
    /// Distance on a grid between the origin and a point.
    #[ai_tool]
    fn manhattan(&self, x: i64, y: i64) -> i64 {
        x.abs() + y.abs()
    }

    /// The same, as an async method.
    #[ai_tool]
    async fn manhattan_async(&self, x: i64, y: i64) -> i64 {
        x.abs() + y.abs()
    }

    /// The distance from the origin to itself: a tool without parameters, to show the cost
    /// of a call apart from its arguments.
    #[ai_tool]
    fn origin(&self) -> i64 {
        0
    }
}

#[derive(Deserialize)]
struct NoArgs {}

#[derive(Deserialize)]
struct FloorArgs {
    x: i64,
    y: i64,
}

/// Polls a future that completes without waiting; no runtime needed, none measured.
///
/// The call is polled where it was made, with no move in between, as a runtime polls a future
/// it holds. Moving a `Call` that was just written costs about 10 ns more on this machine: the
/// copy reads it back wider than it was stored, and stalls until the stores land.
fn ready<F: Future + Unpin>(mut future: F) -> F::Output {
    match Pin::new(&mut future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the benchmarked call does not wait"),
    }
}

/// Inputs made per batch, before the clock starts. Criterion's `SmallInput` makes a tenth of all
/// iterations at once, hundreds of thousands of values here: the clock then mostly measures the
/// page faults of a fresh output vector and the allocator sorting through the inputs' memory.
/// A thousand values stay in cache and in the allocator's reused memory, on both sides.
const BATCH: BatchSize = BatchSize::NumIterations(1_000);

fn executor(tools: usize) -> Executor {
    let filler = (0..tools.saturating_sub(3)).map(|i| {
        DynamicTool::new(
            format!("filler_tool_{i}"),
            "A tool that is only there to be looked past",
            json!({ "type": "object", "properties": { "q": { "type": "string" } } }),
            |_, _| async { Ok(ToolOutput::empty()) },
        )
    });
    Executor::builder()
        .service(Arc::new(Geo))
        .tools(filler)
        .build()
        .expect("bench tools build")
}

fn dispatch(c: &mut Criterion) {
    let args = json!({ "x": -3, "y": 4 });
    let geo = Geo;
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("floor", |b| {
        b.iter_batched(
            || args.clone(),
            |args: Value| {
                let parsed: FloorArgs = serde_json::from_value(args).expect("valid");
                serde_json::to_value(geo.manhattan(parsed.x, parsed.y)).expect("serializes")
            },
            BATCH,
        )
    });
    for tools in [10, 10_000] {
        let exec = executor(tools);
        assert_eq!(exec.len(), tools);
        group.bench_function(format!("execute/{tools}_tools"), |b| {
            b.iter_batched(
                || args.clone(),
                |args| ready(exec.execute("manhattan", args)).expect("valid call"),
                BATCH,
            )
        });
    }
    let text = r#"{"x": -3, "y": 4}"#;
    group.bench_function("floor_text", |b| {
        b.iter(|| {
            let parsed: FloorArgs =
                serde_json::from_str(std::hint::black_box(text)).expect("valid");
            serde_json::to_value(geo.manhattan(parsed.x, parsed.y)).expect("serializes")
        })
    });
    let exec = executor(10);
    group.bench_function("execute_text/10_tools", |b| {
        b.iter(|| ready(exec.execute("manhattan", std::hint::black_box(text))).expect("valid call"))
    });
    group.bench_function("floor_no_args", |b| {
        b.iter(|| {
            let NoArgs {} = serde_json::from_str(std::hint::black_box("{}")).expect("valid");
            serde_json::to_value(geo.origin()).expect("serializes")
        })
    });
    group.bench_function("execute_no_args/10_tools", |b| {
        b.iter(|| ready(exec.execute("origin", std::hint::black_box("{}"))).expect("valid call"))
    });
    group.bench_function("execute_async/10_tools", |b| {
        b.iter_batched(
            || args.clone(),
            |args| ready(exec.execute("manhattan_async", args)).expect("valid call"),
            BATCH,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(60).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = dispatch
}
criterion_main!(benches);
