//! What the fuzz targets share: tools covering every argument stage, the executor and runtime
//! they run on, and arbitrary JSON values. Included by each target with `#[path]`, so that the
//! tools' `inventory` registrations are in every binary.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::OnceLock;

use ai_tool::prelude::*;
use arbitrary::Unstructured;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Number, Value};

/// Exact stage: every parameter's type checks its own schema.
#[ai_tool]
fn exact(
    flag: bool,
    small: i8,
    count: u32,
    name: String,
    maybe: Option<i64>,
    list: Vec<String>,
    labels: HashMap<String, u8>,
    any: Value,
) -> usize {
    usize::from(flag)
        + small.unsigned_abs() as usize
        + count as usize % 7
        + name.len()
        + maybe.map_or(0, |m| m.unsigned_abs() as usize % 7)
        + list.len()
        + labels.len()
        + usize::from(!any.is_null())
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Address {
    #[schemars(length(min = 1, max = 20))]
    street: String,
    #[schemars(range(min = 1, max = 99999))]
    zip: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Booking {
    #[schemars(length(max = 10))]
    title: String,
    unit: Unit,
    #[schemars(length(min = 1, max = 3))]
    addresses: Vec<Address>,
    note: Option<String>,
    #[schemars(range(min = -5.5, max = 5.5))]
    ratio: f64,
}

/// Validating stage: constraints the checking deserializer follows.
#[ai_tool]
fn validating(booking: Booking, #[arg(default = 3)] nights: u8) -> usize {
    booking.title.len() + booking.addresses.len() + usize::from(nights)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    Circle { radius: f64 },
    Square { side: u32 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Either {
    Number(i64),
    Words(Vec<String>),
}

/// Full stage: a schema outside the subset (tagged and untagged enums).
#[ai_tool]
fn full(shape: Shape, either: Either, extra: Option<HashMap<String, Shape>>) -> usize {
    let s = match shape {
        Shape::Circle { radius } => radius.abs().min(9.0) as usize,
        Shape::Square { side } => side as usize % 9,
    };
    let e = match either {
        Either::Number(n) => n.unsigned_abs() as usize % 9,
        Either::Words(w) => w.len(),
    };
    s + e + extra.map_or(0, |m| m.len())
}

/// The tools a call may name, the first byte of an input choosing one.
pub const TOOLS: &[&str] = &[
    "exact",
    "validating",
    "full",
    "dynamic",
    "declared",
    "nothing",
];

/// The executor of every target: the tools above, a dynamic tool whose schema has patterns,
/// formats and combinators, and a declared one.
pub fn executor() -> &'static Executor {
    static EXECUTOR: OnceLock<Executor> = OnceLock::new();
    EXECUTOR.get_or_init(|| {
        ai_tool::silence_caught_panics();
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "code": { "type": "string", "pattern": "^[A-Z]{2}(-[0-9]+)*$" },
                "when": { "type": "string", "format": "date" },
                "n": { "type": "number", "multipleOf": 0.5, "exclusiveMaximum": 100 },
                "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true, "maxItems": 4 },
                "pick": { "oneOf": [{ "const": "a" }, { "type": "integer", "minimum": 3 }] },
                "tree": { "$ref": "#/$defs/Node" }
            },
            "required": ["code"],
            "additionalProperties": false,
            "$defs": { "Node": { "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#/$defs/Node" } } } } }
        });
        let dynamic = DynamicTool::new("dynamic", "Checks many keywords", schema.clone(), |a, _| async move {
            Ok(ToolOutput::json(a))
        });
        let declared = DynamicTool::declared(ToolSpec {
            name: "declared".into(),
            description: "Only declared".into(),
            parameters: schema,
            output_schema: None,
            metadata: Default::default(),
        });
        Executor::builder()
            .tool(dynamic)
            .tool(declared)
            .max_argument_bytes(4096)
            .build()
            .expect("the fuzz executor builds")
    })
}

/// The aliases and strict encodings of the executor's declarations in `format`, made once per
/// format and strictness (declaring every tool for every input would be most of the work).
pub fn aliases(format: Format, strict: bool) -> &'static ai_tool::provider::Aliases {
    static ALIASES: OnceLock<Vec<(Format, bool, ai_tool::provider::Aliases)>> = OnceLock::new();
    let all = ALIASES.get_or_init(|| {
        let mut all = Vec::new();
        for format in Format::ALL {
            for strict in [false, true] {
                let options = DeclareOptions {
                    strict,
                    ..DeclareOptions::default()
                };
                all.push((
                    format,
                    strict,
                    executor().declarations(format, &options).aliases,
                ));
            }
        }
        all
    });
    all.iter()
        .find(|(f, s, _)| *f == format && *s == strict)
        .map(|(_, _, aliases)| aliases)
        .expect("every format and strictness")
}

/// A runtime to run calls on, made once.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("a runtime")
        })
        .block_on(future)
}

/// A call's result may be a refusal, never a panic of the executor's own code.
pub fn check_result(tool: &str, result: &Result<ToolOutput, ToolError>) {
    if let Err(err) = result {
        let expected = match tool {
            "declared" if err.kind() == ToolErrorKind::NotExecutable => return,
            "exact" | "validating" | "full" | "dynamic" | "declared" => {
                ToolErrorKind::InvalidArguments
            }
            _ => ToolErrorKind::UnknownTool,
        };
        assert!(
            err.kind() == expected || err.kind() == ToolErrorKind::ArgumentsTooLarge,
            "{tool}: unexpected {err:?}"
        );
        let _ = err.to_model_text();
    }
}

/// Keys worth trying: the tools' own property names, and a few others.
const KEYS: &[&str] = &[
    "flag",
    "small",
    "count",
    "name",
    "maybe",
    "list",
    "labels",
    "any",
    "booking",
    "nights",
    "title",
    "unit",
    "addresses",
    "street",
    "zip",
    "note",
    "ratio",
    "shape",
    "kind",
    "radius",
    "side",
    "either",
    "extra",
    "code",
    "when",
    "n",
    "tags",
    "pick",
    "tree",
    "kids",
    "",
    "$ref",
];

/// Strings worth trying: enum members, tags, and edge cases.
const STRINGS: &[&str] = &[
    "Celsius",
    "Fahrenheit",
    "circle",
    "square",
    "a",
    "AB-12",
    "2024-02-30",
    "",
    "null",
    "\u{0}",
    "é",
    "🦀",
    "0123456789a",
];

/// An arbitrary JSON value, nested up to `depth` levels.
pub fn value(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Value> {
    let pick: u8 = u.arbitrary()?;
    Ok(match pick % 12 {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(Number::from(u.arbitrary::<i64>()?)),
        3 => Value::Number(Number::from(u.arbitrary::<u64>()?)),
        4 => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        5 => Value::Number(Number::from(u.int_in_range(-3i64..=300)?)),
        6 => Value::String(u.arbitrary()?),
        7 => Value::String((*u.choose(STRINGS)?).to_owned()),
        8 | 9 if depth > 0 => {
            let len = u.int_in_range(0..=4)?;
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(value(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ if depth > 0 => Value::Object(object(u, depth - 1)?),
        _ => Value::Null,
    })
}

/// An arbitrary JSON object, its values nested up to `depth` levels.
pub fn object(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Map<String, Value>> {
    let len = u.int_in_range(0..=6)?;
    let mut map = Map::new();
    for _ in 0..len {
        let key = if u.ratio(7, 8)? {
            (*u.choose(KEYS)?).to_owned()
        } else {
            u.arbitrary()?
        };
        map.insert(key, value(u, depth)?);
    }
    Ok(map)
}

/// `depth` arrays nested in one another, for inputs that ask for a value past the nesting
/// limit; taken apart without recursion by the executor or [`ai_tool::nesting::dismantle`].
pub fn nested(depth: usize) -> Value {
    let mut value = Value::Array(Vec::new());
    for _ in 1..depth {
        value = Value::Array(vec![value]);
    }
    value
}
