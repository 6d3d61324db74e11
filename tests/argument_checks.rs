//! What a call's arguments are checked for, and what the model is told when they fail: deep
//! values, one verdict for `validate` and `execute`, strict-mode nulls, the length of the error
//! text, the closest branch of a `oneOf`, and closed nested objects.

mod common;

use std::collections::HashMap;

use ai_tool::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use common::deep::{nested_arrays, object, on_small_stack};
use common::tools::echo;
use common::{block_on, Rng};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Note {
    #[schemars(length(max = 10))]
    title: String,
    body: Value,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Address {
    street: String,
    city: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    Circle { radius: f64 },
    Square { side: u32 },
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

/// A struct that opts out of being closed.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
pub struct Loose {
    a: u8,
}

/// A struct whose unknown keys are kept in a map.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WithExtras {
    name: String,
    #[serde(flatten)]
    extra: HashMap<String, Value>,
}

/// An enum whose variant has a defaulted field: strict mode makes it required and nullable.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Figure {
    Circle {
        radius: f64,
        #[serde(default)]
        label: String,
    },
    Dot,
}

/// A recursive struct with defaulted fields.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Branch {
    name: String,
    #[serde(default)]
    weight: u32,
    #[serde(default)]
    children: Vec<Branch>,
}

impl Branch {
    fn count(&self) -> usize {
        1 + self.children.iter().map(Branch::count).sum::<usize>()
    }
}

/// A struct with an enum flattened into it: its properties sit beside the enum's `oneOf`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Search {
    query: String,
    #[serde(flatten)]
    filter: Filter,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Filter {
    Author { name: String },
    Year { from: u16 },
}

#[ai_tool(description = "Draws a figure")]
fn draw(figure: Figure) -> String {
    format!("{figure:?}")
}

#[ai_tool(description = "Counts a tree's branches")]
fn count_branches(tree: Branch) -> String {
    format!("{} {}", tree.name, tree.count() + tree.weight as usize)
}

#[ai_tool(description = "Searches with a filter")]
fn search(search: Search) -> String {
    format!("{} {:?}", search.query, search.filter)
}

#[ai_tool(description = "Keeps any value")]
fn keep_value(v: Value) -> usize {
    usize::from(!v.is_null())
}

#[ai_tool(description = "Keeps any value, on the blocking pool", timeout = "10s")]
fn keep_value_on_the_pool(v: Value) -> usize {
    usize::from(!v.is_null())
}

#[ai_tool(description = "Keeps any values")]
fn keep_values(v: Vec<Value>) -> usize {
    v.len()
}

#[ai_tool(description = "Keeps a note")]
fn keep_note(note: Note) -> usize {
    note.title.len() + usize::from(!note.body.is_null())
}

#[ai_tool(description = "Takes a byte and a defaulted number")]
fn small(x: u8, #[arg(default = 7)] n: i32) -> i64 {
    i64::from(x) + i64::from(n)
}

#[ai_tool(description = "Takes many bytes")]
fn bytes(values: Vec<u8>, label: String) -> usize {
    values.len() + label.len()
}

#[ai_tool(description = "Ships a shape to an address")]
fn ship(to: Address, shape: Shape) -> String {
    format!("{} {} {shape:?}", to.street, to.city)
}

#[ai_tool(description = "Takes objects that stay open")]
fn open(loose: Loose, extras: WithExtras) -> usize {
    usize::from(loose.a) + extras.name.len() + extras.extra.len()
}

#[allow(clippy::too_many_arguments)]
#[ai_tool(description = "Takes one parameter of many types")]
fn many(
    byte: u8,
    short: i16,
    big: u64,
    ratio: f64,
    flag: bool,
    name: String,
    maybe: Option<u32>,
    list: Vec<u8>,
    unit: Unit,
    shape: Shape,
    to: Address,
    counts: HashMap<String, u16>,
    any: Value,
    #[arg(default = 3)] defaulted: i8,
) -> usize {
    let _ = (ratio, flag, unit, shape, to, any);
    usize::from(byte)
        + short.unsigned_abs() as usize
        + (big % 7) as usize
        + name.len()
        + maybe.map_or(0, |m| m as usize % 7)
        + list.len()
        + counts.len()
        + defaulted.unsigned_abs() as usize
}

fn executor() -> Executor {
    Executor::builder().build().expect("tools build")
}

fn violations(err: &ToolError) -> Vec<String> {
    match err {
        ToolError::InvalidArguments { violations, .. } => {
            violations.iter().map(ToString::to_string).collect()
        }
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

// Item 1: deep values.

#[test]
fn a_deep_value_is_refused_naming_the_limit_not_a_stack_overflow() {
    on_small_stack(|| {
        let exec = executor();
        for (tool, key, wrap) in [
            ("keep_value", "v", false),
            ("keep_values", "v", true),
            ("keep_note", "note", false),
        ] {
            let deep = nested_arrays(5_000);
            let mut args = Map::new();
            let inner = if wrap {
                Value::Array(vec![deep])
            } else if tool == "keep_note" {
                // Not `json!`, which would serialize the deep value.
                let mut note = Map::new();
                note.insert("title".into(), json!("t"));
                note.insert("body".into(), deep);
                Value::Object(note)
            } else {
                deep
            };
            args.insert(key.into(), inner);
            let args = Value::Object(args);
            let by_ref = block_on(exec.execute(tool, &args)).unwrap_err();
            let text = by_ref.to_model_text();
            assert!(text.contains("128"), "{tool}: {text}");
            assert!(text.len() < 2_000, "{tool}: {} bytes", text.len());
            let invalid = exec.validate(tool, &args).unwrap_err();
            assert_eq!(invalid.to_string(), by_ref.to_string(), "{tool}");
            let by_value = block_on(exec.execute(tool, args)).unwrap_err();
            assert_eq!(by_value.to_string(), by_ref.to_string(), "{tool}");
        }
    });
}

#[test]
fn a_value_as_deep_as_text_allows_is_accepted_and_one_deeper_is_not() {
    on_small_stack(|| {
        let exec = executor();
        // Text allows 127 nested arrays and objects, the arguments object included.
        for (depth, ok) in [(126, true), (127, false)] {
            let args = object("v", nested_arrays(depth));
            let from_text = block_on(exec.execute("keep_value", args.to_string())).is_ok();
            let from_value = block_on(exec.execute("keep_value", &args)).is_ok();
            assert_eq!(
                (from_text, from_value),
                (ok, ok),
                "{depth} arrays in the object"
            );
            assert_eq!(exec.validate("keep_value", &args).is_ok(), ok, "{depth}");
        }
    });
}

#[test]
fn a_very_deep_value_given_away_is_dropped_without_overflow() {
    on_small_stack(|| {
        let exec = executor();
        let args = object("v", nested_arrays(100_000));
        let invalid = exec.validate("keep_value", &args).unwrap_err();
        assert!(invalid.to_string().contains("128"), "{invalid}");
        let err = block_on(exec.execute("keep_value", &args)).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
        let values = Value::Array(vec![nested_arrays(100_000)]);
        let err = block_on(exec.execute("keep_values", object("v", values))).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
        // Given away: the executor drops it.
        let err = block_on(exec.execute("keep_value", args)).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
    });
}

#[test]
fn a_very_deep_value_for_a_sync_tool_with_a_time_limit_is_refused() {
    on_small_stack(|| {
        let exec = executor();
        let args = object("v", nested_arrays(100_000));
        let err = block_on(exec.execute("keep_value_on_the_pool", &args)).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
        let err = block_on(exec.execute("keep_value_on_the_pool", args)).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
        let fine = object("v", nested_arrays(100));
        assert!(block_on(exec.execute("keep_value_on_the_pool", &fine)).is_ok());
    });
}

#[test]
fn a_very_deep_value_for_a_dynamic_tool_is_refused() {
    on_small_stack(|| {
        let tool = echo(
            "echo",
            json!({ "type": "object", "properties": { "v": {} } }),
        );
        let exec = Executor::builder().tool(tool).build().expect("builds");
        let args = object("v", nested_arrays(100_000));
        let err = block_on(exec.execute("echo", &args)).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
        let err = block_on(exec.execute("echo", args)).unwrap_err();
        assert!(err.to_string().contains("128"), "{err}");
    });
}

#[test]
fn a_lower_nesting_limit_is_kept_from_text_and_value_in_every_stage() {
    let exec = Executor::builder()
        .tool(echo(
            "echo",
            json!({ "type": "object", "properties": { "v": {} } }),
        ))
        .max_argument_depth(4)
        .build()
        .expect("builds");
    // Three levels (the arguments object, then two) pass; four do not, whatever the stage.
    let cases = [
        ("keep_value", json!({"v": [[]]}), json!({"v": [[[]]]})),
        ("keep_values", json!({"v": [[]]}), json!({"v": [[[]]]})),
        (
            "keep_note",
            json!({"note": {"title": "t", "body": []}}),
            json!({"note": {"title": "t", "body": [[]]}}),
        ),
        ("small", json!({"x": 1}), json!({"x": 1, "junk": [[[]]]})),
        ("echo", json!({"v": [[]]}), json!({"v": [[[]]]})),
    ];
    for (tool, fits, deep) in cases {
        assert!(
            block_on(exec.execute(tool, fits.to_string())).is_ok(),
            "{tool}: {fits}"
        );
        assert!(
            block_on(exec.execute(tool, &fits)).is_ok(),
            "{tool}: {fits}"
        );
        let from_text = block_on(exec.execute(tool, deep.to_string())).unwrap_err();
        let from_value = block_on(exec.execute(tool, &deep)).unwrap_err();
        let validated = exec.validate(tool, &deep).unwrap_err();
        for err in [&from_text, &from_value, &validated] {
            let text = err.to_model_text();
            assert!(
                text.contains("fewer than 4") && text.contains("max_argument_depth"),
                "{tool}: {text}"
            );
        }
        assert_eq!(from_text.to_string(), from_value.to_string(), "{tool}");
    }
    // A setting past what text allows acts as the most there is.
    let exec = Executor::builder()
        .max_argument_depth(1_000)
        .build()
        .expect("builds");
    let args = object("v", nested_arrays(127));
    let err = block_on(exec.execute("keep_value", args.to_string())).unwrap_err();
    assert!(err.to_model_text().contains("fewer than 128"), "{err}");
}

#[test]
fn deep_text_is_refused_naming_the_limit() {
    let exec = executor();
    let text = format!("{{\"v\": {}{}}}", "[".repeat(5_000), "]".repeat(5_000));
    let err = block_on(exec.execute("keep_value", text.as_str())).unwrap_err();
    assert!(err.to_model_text().contains("128"), "{err}");
}

// Item 5: one verdict for `validate` and `execute`.

#[test]
fn an_integer_written_as_a_float_is_refused_by_both_in_the_schemas_words() {
    let exec = executor();
    for (args, pointer) in [
        (r#"{"x": 1.0}"#, "/x: 1.0 is not an integer"),
        (r#"{"x": 1e3}"#, "/x: 1000.0 is not an integer"),
        (r#"{"x": 1, "n": -9223372036854775809}"#, "/n: "),
    ] {
        let value: Value = serde_json::from_str(args).unwrap();
        let invalid = exec.validate("small", &value).expect_err(args);
        let from_value = block_on(exec.execute("small", &value)).expect_err(args);
        let from_text = block_on(exec.execute("small", args)).expect_err(args);
        assert_eq!(invalid.to_string(), from_value.to_string(), "{args}");
        assert_eq!(invalid.to_string(), from_text.to_string(), "{args}");
        let text = from_text.to_model_text();
        assert!(text.contains(pointer), "{args}: {text}");
        assert!(!text.contains("floating point"), "{text}");
        assert!(!text.contains("u8") && !text.contains("i32"), "{text}");
    }
}

#[test]
fn arguments_over_the_size_cap_fail_validate_as_they_fail_execute() {
    let exec = Executor::builder()
        .max_argument_bytes(100)
        .build()
        .expect("builds");
    let args = json!({ "values": vec![1; 60], "label": "l" });
    let invalid = exec.validate("bytes", &args).unwrap_err();
    assert!(
        matches!(invalid, ToolError::ArgumentsTooLarge { .. }),
        "{invalid}"
    );
    let err = block_on(exec.execute("bytes", &args)).unwrap_err();
    assert_eq!(invalid.to_string(), err.to_string());
}

/// Values at the edges of the parameters' types, and of the others'.
fn pool() -> Vec<Value> {
    let parsed = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.0),
        parsed("1e3"),
        parsed("-9223372036854775809"),
        parsed("18446744073709551616"),
        json!(2.5),
        json!(255),
        json!(256),
        json!(-32_769),
        json!(u64::MAX),
        json!(""),
        json!("Celsius"),
        json!("kelvin"),
        json!([]),
        json!([1, 2]),
        json!([1.0]),
        json!([300]),
        json!({}),
        json!({"k": 1}),
        json!({"k": 2.0}),
        json!({"k": 70_000}),
        json!({"street": "s", "city": "c"}),
        json!({"street": "s", "city": "c", "zip": 1}),
        json!({"street": "s", "city": null}),
        json!({"kind": "circle", "radius": 1.5}),
        json!({"kind": "square", "side": 2}),
        json!({"kind": "square", "side": 2.0}),
        json!({"kind": "square", "side": -2}),
        json!({"kind": "square", "side": 2, "radius": 1}),
        json!({"kind": "triangle"}),
    ]
}

fn random_arguments(rng: &mut Rng, pool: &[Value]) -> Value {
    let valid = json!({
        "byte": 7, "short": -300, "big": 12, "ratio": 0.5, "flag": false, "name": "n",
        "maybe": 3, "list": [1, 2], "unit": "Fahrenheit", "shape": {"kind": "circle", "radius": 2},
        "to": {"street": "s", "city": "c"}, "counts": {"a": 1}, "any": [1, {"x": null}],
        "defaulted": -4,
    });
    let mut object = Map::new();
    for (key, value) in valid.as_object().unwrap() {
        if rng.chance(3) {
            continue;
        }
        let value = if rng.chance(8) {
            rng.pick(pool)
        } else {
            value.clone()
        };
        object.insert(key.clone(), value);
    }
    if rng.chance(3) {
        object.insert("unknown".into(), rng.pick(pool));
    }
    Value::Object(object)
}

#[test]
fn validate_and_execute_agree_on_random_arguments() {
    let exec = executor();
    let pool = pool();
    let mut rng = Rng(0x5eed_0013_0005_abcd);
    let (mut executed, mut refused) = (0, 0);
    for _ in 0..3_000 {
        let args = random_arguments(&mut rng, &pool);
        let text = args.to_string();
        let valid = exec.validate("many", &args);
        let from_value = block_on(exec.execute("many", &args));
        let from_text = block_on(exec.execute("many", text.as_str()));
        match (&valid, &from_value) {
            (Ok(()), Ok(_)) => executed += 1,
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "{text}");
                refused += 1;
            }
            (Ok(()), Err(e)) => panic!("validate accepts, execute refuses: {text}: {e}"),
            (Err(e), Ok(_)) => panic!("validate refuses, execute accepts: {text}: {e}"),
        }
        assert_eq!(
            from_value.map_err(|e| e.to_string()),
            from_text.map_err(|e| e.to_string()),
            "one call, two forms: {text}"
        );
    }
    assert!(
        executed > 300 && refused > 300,
        "both sides tried: {executed} executed, {refused} refused"
    );
}

// Item 6: strict-mode nulls.

#[test]
fn a_null_that_counts_as_absent_is_not_reported_beside_a_real_violation() {
    let exec = executor();
    let args = json!({ "x": "not a byte", "n": null });
    let err = block_on(exec.execute("small", &args)).unwrap_err();
    assert_eq!(violations(&err), [r#"/x: "not a byte" is not an integer"#]);
    assert_eq!(
        exec.validate("small", &args).unwrap_err().to_string(),
        err.to_string()
    );
    // Alone, the null is accepted by both.
    let args = json!({ "x": 1, "n": null });
    assert!(exec.validate("small", &args).is_ok());
    assert!(block_on(exec.execute("small", &args)).is_ok());
}

/// A strict-mode null is read as absent in an enum's variant, under a recursive `$ref`, and
/// inside the items of a list of them; a required field's null is still refused.
#[test]
fn a_strict_null_is_absent_in_a_variant_and_under_a_recursive_reference() {
    let exec = executor();
    let figure = json!({ "figure": { "kind": "circle", "radius": 1.5, "label": null } });
    let drawn = block_on(exec.execute("draw", &figure)).unwrap();
    assert!(
        drawn.to_text().contains("label: \"\""),
        "{}",
        drawn.to_text()
    );
    assert!(exec.validate("draw", &figure).is_ok());
    let tree = json!({ "tree": {
        "name": "root", "weight": null,
        "children": [
            { "name": "a", "weight": null, "children": null },
            { "name": "b", "weight": 2, "children": [{ "name": "c", "weight": null, "children": null }] }
        ]
    } });
    let counted = block_on(exec.execute("count_branches", &tree)).unwrap();
    assert_eq!(counted.to_text(), "root 4");
    let radius = json!({ "figure": { "kind": "circle", "radius": null, "label": null } });
    let err = block_on(exec.execute("draw", &radius)).unwrap_err();
    assert!(
        err.to_model_text().contains("radius"),
        "{}",
        err.to_model_text()
    );
}

/// An object with properties beside an enum's branches (`#[serde(flatten)]` of an enum) has
/// no closed form: both strict profiles leave the tool non-strict rather than declaring a
/// schema no value fits.
#[test]
fn a_flattened_enum_makes_the_tool_non_strict() {
    let exec = executor();
    let spec = exec.spec("search").unwrap();
    for result in [
        ai_tool::profile::openai_strict(&spec.parameters),
        ai_tool::profile::anthropic_strict(&spec.parameters),
    ] {
        let err = result.unwrap_err();
        assert!(err.to_string().contains("beside its properties"), "{err}");
    }
    let args = json!({ "search": { "query": "rust", "by": "year", "from": 2015 } });
    assert!(block_on(exec.execute("search", &args)).is_ok());
}

// Item 7: bounded error text.

#[test]
fn a_long_wrong_value_is_quoted_shortened() {
    let exec = executor();
    let long: Vec<u32> = (1..=100_000).collect();
    let err = block_on(exec.execute("bytes", json!({ "values": [1], "label": long }))).unwrap_err();
    let text = err.to_model_text();
    assert!(text.len() < 1_000, "{} bytes: {}", text.len(), &text[..200]);
    assert!(text.contains("[1, 2, 3, ... 99,997 more]"), "{text}");
    let err = block_on(exec.execute(
        "bytes",
        json!({ "values": "x".repeat(100_000), "label": "l" }),
    ))
    .unwrap_err();
    let text = err.to_model_text();
    assert!(text.len() < 1_000, "{} bytes", text.len());
    assert!(text.contains("more characters"), "{text}");
}

#[test]
fn many_violations_are_listed_up_to_twenty_then_counted() {
    let exec = executor();
    let err = block_on(exec.execute(
        "bytes",
        json!({ "values": vec![300; 100_000], "label": "l" }),
    ))
    .unwrap_err();
    let text = err.to_model_text();
    assert!(text.len() < 4_000, "{} bytes", text.len());
    assert_eq!(text.matches("\n- /values/").count(), 20, "{text}");
    assert!(text.contains("and 99,980 more"), "{text}");
    assert!(
        err.to_string().len() < 4_000,
        "{} bytes",
        err.to_string().len()
    );
}

// Item 8: the closest branch of a `oneOf`, and plain words.

#[test]
fn a_tagged_union_reports_the_violations_of_the_branch_its_tag_names() {
    let exec = executor();
    let to = json!({ "street": "s", "city": "c" });
    let err = block_on(exec.execute(
        "ship",
        json!({ "to": to, "shape": { "kind": "square", "side": -1 } }),
    ))
    .unwrap_err();
    assert_eq!(
        violations(&err),
        ["/shape/side: -1 is less than the minimum of 0"]
    );
    let err = block_on(exec.execute("ship", json!({ "to": to, "shape": { "kind": "triangle" } })))
        .unwrap_err();
    let got = violations(&err);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with(r#"/shape/kind: "triangle" is not one of "circle" or "square""#),
        "{got:?}"
    );
    for text in got {
        assert!(!text.contains("oneOf") && !text.contains("anyOf"), "{text}");
    }
}

#[test]
fn an_unknown_property_is_named_with_the_allowed_ones() {
    let exec = executor();
    let err = block_on(exec.execute("small", json!({ "x": 1, "z": 2 }))).unwrap_err();
    assert_eq!(
        violations(&err),
        [r#"/: unknown property "z"; the allowed ones are x, n"#]
    );
}

// Item 9: nested objects are closed.

#[test]
fn an_unknown_key_in_a_nested_struct_is_refused_from_text_and_value() {
    let exec = executor();
    let args = json!({
        "to": { "street": "s", "city": "c", "zip": "12345" },
        "shape": { "kind": "circle", "radius": 1.0 }
    });
    let expected = [r#"/to: unknown property "zip"; the allowed ones are street, city"#];
    let err = block_on(exec.execute("ship", &args)).unwrap_err();
    assert_eq!(violations(&err), expected);
    let err = block_on(exec.execute("ship", args.to_string())).unwrap_err();
    assert_eq!(violations(&err), expected);
    assert!(exec.validate("ship", &args).is_err());
    let args = json!({
        "to": { "street": "s", "city": "c" },
        "shape": { "kind": "circle", "radius": 1.0, "side": 3 }
    });
    let err = block_on(exec.execute("ship", &args)).unwrap_err();
    assert!(
        violations(&err)[0].contains(r#"unknown property "side""#),
        "{err}"
    );
}

#[test]
fn a_struct_that_opts_out_or_flattens_a_map_stays_open() {
    let exec = executor();
    let spec = exec.spec("open").expect("the tool");
    let properties = &spec.parameters["properties"];
    assert_eq!(properties["loose"]["additionalProperties"], json!(true));
    assert_ne!(properties["extras"]["additionalProperties"], json!(false));
    let args = json!({ "loose": { "a": 1, "b": 2 }, "extras": { "name": "n", "more": 1 } });
    let output = block_on(exec.execute("open", &args)).expect("open objects take more keys");
    assert_eq!(output.to_text(), "3");
    assert!(exec.validate("open", &args).is_ok());
}

#[test]
fn nested_struct_schemas_are_closed() {
    let exec = executor();
    let spec = exec.spec("ship").expect("the tool");
    let properties = &spec.parameters["properties"];
    assert_eq!(properties["to"]["additionalProperties"], json!(false));
    for branch in properties["shape"]["oneOf"].as_array().expect("a oneOf") {
        assert_eq!(branch["additionalProperties"], json!(false), "{branch}");
    }
}
