//! `execute()` against the floor, in the same run.
//!
//! The floor is what a hand-written dispatcher must do at least: deserialize the same JSON into
//! the argument struct, call the method, serialize the result. `execute()` adds the name lookup,
//! the size cap, schema validation and the protection around the call. Measured with 10 and with
//! 10,000 tools registered, to show that dispatch does not grow with the number of tools, and for
//! a tool without parameters, to show what a call costs apart from its arguments.
//!
//! Each stage of the argument pipeline has its rows: `manhattan` takes `i64`s, read by serde
//! alone (the Exact stage); `book` takes a user struct with constraints (lengths, a range, an
//! enum) and `plan` one holding a nested struct and a list of them, both checked while they are
//! deserialized (the Validating stage); `reserve` takes a struct whose schema has a `pattern`,
//! outside what the Validating stage follows, so `jsonschema` checks it on a parsed `Value`
//! before serde reads it (the Full stage). Each is compared with its own floor: the same JSON
//! into the same struct, the call, the result serialized.
//!
//! Beside them, a minimal dispatcher written by hand with `execute`'s shape (a future that
//! calls a handler behind a panic guard and gives back a `ToolOutput`, with no schema and no
//! checks): what any dispatcher that returns a `ToolOutput` from a future pays over the floor.
//!
//! After criterion's figures the same routines run once more, interleaved: rounds of a thousand
//! calls of each case in turn, and the best round of each. Timings on a shared machine move
//! from run to run by a fifth and more, and criterion measures one case after the other; the
//! best of interleaved rounds sees both sides of a ratio under the same conditions.
//!
//! `cargo bench --bench dispatch`

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use ai_tool::prelude::*;
use criterion::{criterion_group, BatchSize, Criterion};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

pub struct Geo;

/// A kind of room, for the Validating stage's enum.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
pub enum Room {
    Single,
    Double,
    Suite,
}

/// A booking: a user struct whose schema says more than its `Deserialize` checks.
#[derive(Deserialize, JsonSchema)]
pub struct Booking {
    /// Who stays.
    #[schemars(length(min = 1, max = 40))]
    guest: String,
    /// How many nights.
    #[schemars(range(min = 1, max = 30))]
    nights: u8,
    /// Which kind of room.
    room: Room,
}

/// A place on a trip.
#[derive(Deserialize, JsonSchema)]
pub struct Stop {
    /// Where.
    #[schemars(length(min = 1, max = 40))]
    city: String,
    /// For how many nights.
    #[schemars(range(min = 0, max = 30))]
    nights: u8,
}

/// A trip: a struct holding a struct and a list of them.
#[derive(Deserialize, JsonSchema)]
pub struct Trip {
    /// Where it starts.
    start: Stop,
    /// Where it goes, in order.
    #[schemars(length(max = 10))]
    stops: Vec<Stop>,
}

/// A seat request: a struct whose schema has a `pattern`, which only the Full stage checks.
#[derive(Deserialize, JsonSchema)]
pub struct Seat {
    /// The flight, such as "AF1234".
    #[schemars(regex(pattern = r"^[A-Z]{2}[0-9]{1,4}$"))]
    flight: String,
    /// The row.
    #[schemars(range(min = 1, max = 60))]
    row: u8,
}

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

    /// The price of a booking, in euros.
    #[ai_tool]
    fn book(&self, booking: Booking) -> u32 {
        price(&booking)
    }

    /// The nights a trip takes.
    #[ai_tool]
    fn plan(&self, trip: Trip) -> u32 {
        nights(&trip)
    }

    /// The price of a seat, in euros.
    #[ai_tool]
    fn reserve(&self, seat: Seat) -> u32 {
        seat_price(&seat)
    }
}

fn seat_price(seat: &Seat) -> u32 {
    40 + u32::from(seat.row) + seat.flight.len() as u32 % 2
}

fn price(booking: &Booking) -> u32 {
    let per_night = match booking.room {
        Room::Single => 80,
        Room::Double => 110,
        Room::Suite => 240,
    };
    per_night * u32::from(booking.nights) + booking.guest.len() as u32 % 2
}

fn nights(trip: &Trip) -> u32 {
    let stops = trip.stops.iter().map(|s| u32::from(s.nights)).sum::<u32>();
    u32::from(trip.start.nights) + stops + trip.start.city.len() as u32 % 2
}

#[derive(Deserialize)]
struct BookArgs {
    booking: Booking,
}

#[derive(Deserialize)]
struct PlanArgs {
    trip: Trip,
}

const BOOK_ARGS: &str = r#"{"booking": {"guest": "Ada Lovelace", "nights": 3, "room": "Double"}}"#;

#[derive(Deserialize)]
struct ReserveArgs {
    seat: Seat,
}

const RESERVE_ARGS: &str = r#"{"seat": {"flight": "AF1234", "row": 12}}"#;

const PLAN_ARGS: &str = r#"{"trip": {"start": {"city": "Lyon", "nights": 1}, "stops": [{"city": "Turin", "nights": 2}, {"city": "Genoa", "nights": 3}]}}"#;

/// The floor of the Validating stage: a user struct with constraints, from JSON text.
fn floor_book(text: &str) -> Value {
    let BookArgs { booking } = serde_json::from_str(text).expect("valid");
    serde_json::to_value(Geo.book(booking)).expect("serializes")
}

/// The floor of the Validating stage: a nested struct, from JSON text.
fn floor_plan(text: &str) -> Value {
    let PlanArgs { trip } = serde_json::from_str(text).expect("valid");
    serde_json::to_value(Geo.plan(trip)).expect("serializes")
}

/// The floor of the Full stage: a struct whose schema has a pattern, from JSON text.
fn floor_reserve(text: &str) -> Value {
    let ReserveArgs { seat } = serde_json::from_str(text).expect("valid");
    serde_json::to_value(Geo.reserve(seat)).expect("serializes")
}

/// The floor of the Validating stage from a value.
fn floor_book_value(args: Value) -> Value {
    let BookArgs { booking } = serde_json::from_value(args).expect("valid");
    serde_json::to_value(Geo.book(booking)).expect("serializes")
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
    let filler = (0..tools.saturating_sub(6)).map(|i| {
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

const ARGS: &str = r#"{"x": -3, "y": 4}"#;

/// The arguments as a value, made once and cloned for each call.
fn value_args() -> Value {
    serde_json::from_str(ARGS).expect("valid JSON")
}

/// The arguments as text, hidden from the optimizer.
fn text() -> &'static str {
    std::hint::black_box(ARGS)
}

/// A booking as text, hidden from the optimizer.
fn book_text() -> &'static str {
    std::hint::black_box(BOOK_ARGS)
}

/// A trip as text, hidden from the optimizer.
fn plan_text() -> &'static str {
    std::hint::black_box(PLAN_ARGS)
}

/// A seat request as text, hidden from the optimizer.
fn reserve_text() -> &'static str {
    std::hint::black_box(RESERVE_ARGS)
}

/// A booking as a value, made once and cloned for each call.
fn book_value() -> Value {
    serde_json::from_str(BOOK_ARGS).expect("valid JSON")
}

/// No arguments, as text, hidden from the optimizer.
fn empty() -> &'static str {
    std::hint::black_box("{}")
}

/// The floor from a value: deserialize, call the method, serialize the result.
fn floor_value(args: Value) -> Value {
    let parsed: FloorArgs = serde_json::from_value(args).expect("valid");
    serde_json::to_value(Geo.manhattan(parsed.x, parsed.y)).expect("serializes")
}

/// The floor from JSON text.
fn floor_text(text: &str) -> Value {
    let parsed: FloorArgs = serde_json::from_str(text).expect("valid");
    serde_json::to_value(Geo.manhattan(parsed.x, parsed.y)).expect("serializes")
}

/// The floor of a method without parameters, from `{}`.
fn floor_no_args(text: &str) -> Value {
    let NoArgs {} = serde_json::from_str(text).expect("valid");
    serde_json::to_value(Geo.origin()).expect("serializes")
}

/// A tool of a hand-written dispatcher: JSON text in, the tool's output or error out.
type Handler = fn(&str) -> Result<ToolOutput, ToolError>;

/// A handler's arguments, as a hand-written dispatcher reads them.
fn hand_args<T: serde::de::DeserializeOwned>(tool: &str, text: &str) -> Result<T, ToolError> {
    serde_json::from_str(text).map_err(|e| ToolError::Failed {
        tool: tool.into(),
        message: e.to_string(),
        error: None,
        source: None,
    })
}

fn manhattan_handler(text: &str) -> Result<ToolOutput, ToolError> {
    let args: FloorArgs = hand_args("manhattan", text)?;
    Ok(ToolOutput::json(json!(Geo.manhattan(args.x, args.y))))
}

fn origin_handler(text: &str) -> Result<ToolOutput, ToolError> {
    let NoArgs {} = hand_args("origin", text)?;
    Ok(ToolOutput::json(json!(Geo.origin())))
}

/// What a dispatcher written by hand for these tools, with `execute`'s shape, does at least: a
/// `match` on the name, a future whose poll calls the handler behind a panic guard, and a
/// `ToolOutput` back. No schema, no validation, no context, no size cap, no time limit.
struct HandCall<'a> {
    handler: Option<Handler>,
    text: &'a str,
}

fn hand_dispatch<'a>(name: &str, text: &'a str) -> HandCall<'a> {
    let handler: Option<Handler> = match name {
        "manhattan" => Some(manhattan_handler),
        "origin" => Some(origin_handler),
        _ => None,
    };
    HandCall { handler, text }
}

impl Future for HandCall<'_> {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(handler) = self.handler else {
            return Poll::Ready(Err(ToolError::NotExecutable {
                tool: String::new(),
            }));
        };
        let text = self.text;
        Poll::Ready(
            std::panic::catch_unwind(|| handler(text)).unwrap_or_else(|_| {
                Err(ToolError::Panicked {
                    tool: String::new(),
                    message: String::new(),
                })
            }),
        )
    }
}

fn hand(name: &str, text: &str) -> ToolOutput {
    ready(hand_dispatch(std::hint::black_box(name), text)).expect("valid call")
}

fn execute<A: IntoArguments>(exec: &Executor, name: &str, args: A) -> ToolOutput {
    ready(exec.execute(name, args)).expect("valid call")
}

fn dispatch(c: &mut Criterion) {
    let args = value_args();
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("floor", |b| {
        b.iter_batched(|| args.clone(), floor_value, BATCH)
    });
    for tools in [10, 10_000] {
        let exec = executor(tools);
        assert_eq!(exec.len(), tools);
        group.bench_function(format!("execute/{tools}_tools"), |b| {
            b.iter_batched(|| args.clone(), |a| execute(&exec, "manhattan", a), BATCH)
        });
    }
    let exec = executor(10);
    group.bench_function("floor_text", |b| b.iter(|| floor_text(text())));
    group.bench_function("execute_text/10_tools", |b| {
        b.iter(|| execute(&exec, "manhattan", text()))
    });
    group.bench_function("hand_written_text", |b| {
        b.iter(|| hand("manhattan", text()))
    });
    group.bench_function("floor_no_args", |b| b.iter(|| floor_no_args(empty())));
    group.bench_function("execute_no_args/10_tools", |b| {
        b.iter(|| execute(&exec, "origin", empty()))
    });
    group.bench_function("hand_written_no_args", |b| {
        b.iter(|| hand("origin", empty()))
    });
    group.bench_function("floor_struct_text", |b| b.iter(|| floor_book(book_text())));
    group.bench_function("execute_struct_text/10_tools", |b| {
        b.iter(|| execute(&exec, "book", book_text()))
    });
    let booking = book_value();
    group.bench_function("floor_struct", |b| {
        b.iter_batched(|| booking.clone(), floor_book_value, BATCH)
    });
    group.bench_function("execute_struct/10_tools", |b| {
        b.iter_batched(|| booking.clone(), |a| execute(&exec, "book", a), BATCH)
    });
    group.bench_function("floor_nested_text", |b| b.iter(|| floor_plan(plan_text())));
    group.bench_function("execute_nested_text/10_tools", |b| {
        b.iter(|| execute(&exec, "plan", plan_text()))
    });
    group.bench_function("floor_pattern_text", |b| {
        b.iter(|| floor_reserve(reserve_text()))
    });
    group.bench_function("execute_pattern_text/10_tools", |b| {
        b.iter(|| execute(&exec, "reserve", reserve_text()))
    });
    group.bench_function("execute_async/10_tools", |b| {
        b.iter_batched(
            || args.clone(),
            |a| execute(&exec, "manhattan_async", a),
            BATCH,
        )
    });
    group.finish();
}

/// What criterion's `iter` does with each output: hands it to `black_box`, then drops it.
fn consume<O>(output: O) {
    drop(std::hint::black_box(output));
}

/// Calls per interleaved round of a case.
const ROUND: usize = 1_000;

/// One round of a case, as criterion's batches run: inputs made first, the calls timed, the
/// outputs dropped after. Nanoseconds per call.
fn round<I, O>(setup: &mut impl FnMut() -> I, routine: &mut impl FnMut(I) -> O) -> f64 {
    let inputs: Vec<I> = (0..ROUND).map(|_| setup()).collect();
    let mut outputs = Vec::with_capacity(ROUND);
    let start = Instant::now();
    outputs.extend(inputs.into_iter().map(&mut *routine));
    let ns = start.elapsed().as_nanos() as f64 / ROUND as f64;
    drop(std::hint::black_box(outputs));
    ns
}

/// A case of the interleaved rounds: its name, the case it is compared with, and one round.
struct Case<'a> {
    name: &'static str,
    floor: Option<usize>,
    round: Box<dyn FnMut() -> f64 + 'a>,
    best: f64,
}

impl<'a> Case<'a> {
    fn new<I, O>(
        name: &'static str,
        floor: Option<usize>,
        mut setup: impl FnMut() -> I + 'a,
        mut routine: impl FnMut(I) -> O + 'a,
    ) -> Self {
        Case {
            name,
            floor,
            round: Box::new(move || round(&mut setup, &mut routine)),
            best: f64::INFINITY,
        }
    }
}

/// The routines above once more, interleaved; prints the best round of each and its ratio.
fn interleaved() {
    let args = value_args();
    let booking = book_value();
    let (small, large) = (executor(10), executor(10_000));
    let value = || args.clone();
    let book = || booking.clone();
    let mut cases = [
        Case::new("floor, from a Value", None, value, floor_value),
        Case::new("execute(name, Value), 10 tools", Some(0), value, |a| {
            execute(&small, "manhattan", a)
        }),
        Case::new("execute(name, Value), 10,000 tools", Some(0), value, |a| {
            execute(&large, "manhattan", a)
        }),
        Case::new("async tool, execute(name, Value)", Some(0), value, |a| {
            execute(&small, "manhattan_async", a)
        }),
        // As criterion's `iter` runs these: each output is dropped as it is made.
        Case::new("floor, from JSON text", None, text, |t| {
            consume(floor_text(t))
        }),
        Case::new("execute(name, &str)", Some(4), text, |t| {
            consume(execute(&small, "manhattan", t))
        }),
        Case::new("hand-written dispatcher, &str", Some(4), text, |t| {
            consume(hand("manhattan", t))
        }),
        Case::new("floor, no parameters, from {}", None, empty, |t| {
            consume(floor_no_args(t))
        }),
        Case::new(
            "execute(name, \"{}\"), no parameters",
            Some(7),
            empty,
            |t| consume(execute(&small, "origin", t)),
        ),
        Case::new("hand-written dispatcher, \"{}\"", Some(7), empty, |t| {
            consume(hand("origin", t))
        }),
        Case::new(
            "floor, struct with constraints, text",
            None,
            book_text,
            |t| consume(floor_book(t)),
        ),
        Case::new("execute(name, &str), struct", Some(10), book_text, |t| {
            consume(execute(&small, "book", t))
        }),
        Case::new(
            "floor, struct with constraints, Value",
            None,
            book,
            floor_book_value,
        ),
        Case::new("execute(name, Value), struct", Some(12), book, |a| {
            execute(&small, "book", a)
        }),
        Case::new("floor, nested struct, text", None, plan_text, |t| {
            consume(floor_plan(t))
        }),
        Case::new(
            "execute(name, &str), nested struct",
            Some(14),
            plan_text,
            |t| consume(execute(&small, "plan", t)),
        ),
        Case::new(
            "floor, struct with a pattern, text",
            None,
            reserve_text,
            |t| consume(floor_reserve(t)),
        ),
        Case::new(
            "execute(name, &str), pattern (Full stage)",
            Some(16),
            reserve_text,
            |t| consume(execute(&small, "reserve", t)),
        ),
    ];
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut rounds = 0;
    while rounds < 2_000 && Instant::now() < deadline {
        for case in &mut cases {
            case.best = case.best.min((case.round)());
        }
        rounds += 1;
    }
    println!("\ninterleaved: the best of {rounds} rounds of {ROUND} calls of each case in turn");
    for case in &cases {
        let ratio = case
            .floor
            .map(|f| format!("{:.2}x its floor", case.best / cases[f].best))
            .unwrap_or_default();
        println!("{:<42} {:>7.1} ns   {ratio}", case.name, case.best);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(60).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = dispatch
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo test` runs bench targets without `--bench`, to see that they work: no rounds then.
    let args: Vec<String> = std::env::args().collect();
    let measuring = args.iter().any(|a| a == "--bench");
    let other_mode = args.iter().any(|a| a == "--list" || a == "--profile-time");
    if measuring && !other_mode {
        interleaved();
    }
}
