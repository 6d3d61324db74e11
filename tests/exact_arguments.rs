//! A tool whose parameters are all standard types has its arguments checked by serde alone (the
//! Exact stage, `tool-runtime/src/arguments/exact.rs`). These tests hold that path to the
//! schema: random argument objects, each executed as a value and as text, and each checked by
//! `Executor::validate`. What executes
//! must be valid, what is valid must execute, and both forms of one call end alike.

mod common;

use ai_tool::prelude::*;
use serde_json::{json, Map, Value};

use common::Rng;

#[allow(clippy::too_many_arguments)]
#[ai_tool(description = "Takes one parameter of each type that checks its own schema")]
fn every_kind(
    flag: bool,
    small: i8,
    byte: u8,
    count: u32,
    big: i64,
    size: usize,
    ratio: f64,
    name: String,
    maybe: Option<i64>,
    list: Vec<String>,
    nested: Option<Vec<u16>>,
    any: Value,
    labels: std::collections::HashMap<String, u8>,
    #[arg(default = 7)] defaulted: i32,
) -> usize {
    usize::from(flag)
        + small.unsigned_abs() as usize
        + byte as usize
        + count as usize
        + big.unsigned_abs() as usize % 1000
        + size % 1000
        + ratio.abs().min(1000.0) as usize
        + name.len()
        + maybe.map_or(0, |m| m.unsigned_abs() as usize % 1000)
        + list.len()
        + nested.map_or(0, |n| n.len())
        + usize::from(!any.is_null())
        + labels.values().map(|&v| usize::from(v)).sum::<usize>()
        + defaulted.unsigned_abs() as usize
}

const KEYS: &[&str] = &[
    "flag",
    "small",
    "byte",
    "count",
    "big",
    "size",
    "ratio",
    "name",
    "maybe",
    "list",
    "nested",
    "any",
    "labels",
    "defaulted",
    "unknown",
];

/// Values at the edges of every parameter's type, and of the others'.
fn values() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(1.0),
        json!(2.5),
        json!(-0.0),
        json!(127),
        json!(128),
        json!(-128),
        json!(-129),
        json!(255),
        json!(256),
        json!(65_535),
        json!(65_536),
        json!(u32::MAX),
        json!(u64::from(u32::MAX) + 1),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1e300),
        json!(""),
        json!("text"),
        json!("7"),
        json!([]),
        json!(["a", "b"]),
        json!([1, 2]),
        json!([70_000]),
        json!([null]),
        json!({}),
        json!({"k": 1}),
        json!({"k": 256}),
        json!({"k": "1"}),
    ]
}

/// An object of mostly valid arguments, with a few keys left out, changed or added.
fn arguments(rng: &mut Rng, pool: &[Value]) -> Value {
    let valid = json!({
        "flag": true, "small": -5, "byte": 200, "count": 4_000_000_000u32, "big": -9,
        "size": 12, "ratio": 0.5, "name": "n", "maybe": null, "list": ["x"],
        "nested": [1, 2], "any": {"free": "form"}, "labels": {"a": 1}, "defaulted": 3,
    });
    let mut object = Map::new();
    for key in KEYS {
        if rng.chance(3) {
            continue;
        }
        let value = match valid.get(*key) {
            Some(value) if !rng.chance(6) => value.clone(),
            Some(_) => rng.pick(pool),
            None if rng.chance(10) => rng.pick(pool),
            None => continue,
        };
        object.insert((*key).to_owned(), value);
    }
    Value::Object(object)
}

async fn run(exec: &Executor, args: impl IntoArguments) -> Result<Value, String> {
    match exec.execute("every_kind", args).await {
        Ok(output) => Ok(output.structured.expect("a count")),
        Err(ToolError::InvalidArguments { violations, .. }) => Err(violations
            .iter()
            .map(|v| format!("{}: {}", v.pointer, v.message))
            .collect::<Vec<_>>()
            .join("; ")),
        Err(other) => panic!("only invalid arguments may fail: {other}"),
    }
}

#[tokio::test]
async fn serde_alone_admits_nothing_the_schema_refuses() {
    let exec = Executor::builder().build().expect("tools build");
    let pool = values();
    let mut rng = Rng(0x5eed_1234_abcd_0042);
    let (mut executed, mut refused) = (0, 0);
    for _ in 0..3_000 {
        let args = arguments(&mut rng, &pool);
        let text = args.to_string();
        let valid = exec.validate("every_kind", &args);
        let from_value = run(&exec, args.clone()).await;
        let from_text = run(&exec, text.as_str()).await;
        assert_eq!(from_value, from_text, "one call, two forms: {text}");
        match (&valid, &from_value) {
            (Ok(()), Ok(_)) => executed += 1,
            (Err(_), Err(_)) => refused += 1,
            (Err(invalid), Ok(_)) => {
                panic!("executed what the schema refuses: {text}: {invalid}")
            }
            (Ok(()), Err(message)) => panic!("valid but refused: {text}: {message}"),
        }
    }
    assert!(
        executed > 300 && refused > 300,
        "both sides tried: {executed} executed, {refused} refused"
    );
}

#[tokio::test]
async fn an_array_of_the_fields_is_not_an_object() {
    let exec = Executor::builder().build().expect("tools build");
    let fields = json!([true, 1, 1, 1, 1, 1, 0.5, "n", null, [], null, null, {}, 7]);
    for result in [
        run(&exec, fields.clone()).await,
        run(&exec, fields.to_string()).await,
    ] {
        let message = result.expect_err("an array is refused");
        assert!(message.contains("object"), "{message}");
    }
}

#[tokio::test]
async fn a_refused_call_names_every_violation() {
    let exec = Executor::builder().build().expect("tools build");
    let args = r#"{"flag": 1, "small": 300, "byte": 1, "count": 1, "big": 1, "size": -1,
        "ratio": 1, "name": "n", "list": [], "any": null, "labels": {"a": -1}, "extra": 0}"#;
    let message = run(&exec, args).await.expect_err("refused");
    for part in ["/flag", "/small", "/size", "/labels/a", "extra"] {
        assert!(message.contains(part), "{part}: {message}");
    }
}

#[ai_tool(description = "Counts the optional numbers it was given")]
fn count_given(a: Option<i64>, b: Option<i64>) -> usize {
    usize::from(a.is_some()) + usize::from(b.is_some())
}

#[tokio::test]
async fn text_may_open_with_blanks_and_blank_text_is_no_arguments() {
    let exec = Executor::builder().build().expect("tools build");
    let count = |text: &'static str| {
        let exec = &exec;
        async move {
            exec.execute("count_given", text)
                .await
                .map(|output| output.structured)
        }
    };
    for text in [r#"{"a": 1}"#, " \n\t{\"a\": 1}", "\r\n {\"a\":1} "] {
        assert_eq!(count(text).await.expect(text), Some(json!(1)), "{text:?}");
    }
    for text in ["", " \n\t "] {
        assert_eq!(count(text).await.expect(text), Some(json!(0)), "{text:?}");
    }
    for text in ["[1, 2]", " [1]", "1", "null", " x", "{\"a\": 1} x"] {
        match count(text).await {
            Err(ToolError::InvalidArguments { .. }) => {}
            other => panic!("{text:?} is not an arguments object: {other:?}"),
        }
    }
}
