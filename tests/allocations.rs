//! Dispatch allocates nothing of its own for a sync tool, and only the boxed future for an
//! async one, a dynamic one or a hand-written one. Counted with a global allocator, in a binary of its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use ai_tool::prelude::*;
use serde_json::json;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every request goes to the system allocator unchanged; counting has no effect on it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the caller's layout obligations are passed on as they are.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, that is from `System`, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

pub struct Geo;

#[ai_tools]
impl Geo {
    /// Distance on a grid.
    #[ai_tool]
    fn manhattan(&self, x: i64, y: i64) -> i64 {
        x.abs() + y.abs()
    }

    /// Distance on a grid, async.
    #[ai_tool]
    async fn manhattan_async(&self, x: i64, y: i64) -> i64 {
        x.abs() + y.abs()
    }
}

fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the call does not wait"),
    }
}

/// Allocations made by one call, the arguments being built beforehand.
fn allocations_of(exec: &Executor, tool: &str) -> usize {
    let args = json!({ "x": -3, "y": 4 });
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let out = ready(exec.execute(tool, args)).expect("valid call");
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    assert_eq!(out.to_text(), "7");
    after - before
}

/// The same distance as a tool defined at run time.
fn manhattan_dynamic() -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": { "x": { "type": "integer" }, "y": { "type": "integer" } },
        "required": ["x", "y"],
        "additionalProperties": false
    });
    DynamicTool::new(
        "manhattan_dynamic",
        "Distance on a grid, defined at run time",
        schema,
        |args, _| async move {
            let coordinate = |name: &str| args[name].as_i64().unwrap_or_default().abs();
            Ok(ToolOutput::json((coordinate("x") + coordinate("y")).into()))
        },
    )
}

/// A point, the arguments of the hand-written distance.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Point {
    x: i64,
    y: i64,
}

/// The same distance as a hand-written tool.
struct ManhattanByHand;

impl Tool for ManhattanByHand {
    type Args = Point;
    type Output = Json<i64>;

    fn name(&self) -> &str {
        "manhattan_by_hand"
    }

    fn description(&self) -> &str {
        "Distance on a grid, written by hand"
    }

    async fn call(&self, p: Point, _ctx: &ToolContext<'_>) -> Json<i64> {
        Json(p.x.abs() + p.y.abs())
    }
}

#[test]
fn a_sync_call_allocates_nothing_and_an_async_or_dynamic_call_only_its_future() {
    let exec = Executor::builder()
        .service(Arc::new(Geo))
        .tool(manhattan_dynamic())
        .tool(ManhattanByHand)
        .build()
        .unwrap();
    // Warm up anything lazily made once per process.
    let tools = [
        "manhattan",
        "manhattan_async",
        "manhattan_dynamic",
        "manhattan_by_hand",
    ];
    for tool in tools {
        allocations_of(&exec, tool);
    }
    assert_eq!(allocations_of(&exec, "manhattan"), 0);
    assert_eq!(allocations_of(&exec, "manhattan_async"), 1);
    assert_eq!(allocations_of(&exec, "manhattan_dynamic"), 1);
    assert_eq!(allocations_of(&exec, "manhattan_by_hand"), 1);
}
