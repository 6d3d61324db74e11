//! Hostile input, one test per kind, each named after the input: what a catalog, a dynamic
//! tool's schema, a provider's response or a call's arguments may throw at the executor. Each
//! gives a clear error at load or a correct verdict, and the next call works.
//!
//! Deep arguments have their own tests in `argument_checks.rs` (`a_very_deep_value_*`,
//! `deep_text_is_refused_naming_the_limit`).

mod common;

use std::net::TcpListener;
use std::path::Path;

use ai_tool::catalog::{self, CatalogLimits, NameRule};
use ai_tool::nesting::dismantle;
use ai_tool::prelude::*;
use ai_tool::provider::{self, parse_calls, read_response, Aliases, ParseError, ResponseLimits};
use ai_tool::schema::SchemaLimits;
use serde_json::{json, Map, Value};

use common::deep::{nested_arrays, object, on_small_stack};
use common::tools::{echo, executor_of};
use common::{block_on, TempFile};

/// Adds two numbers: the Exact stage (serde alone).
#[ai_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn parse(text: &str) -> Result<Vec<catalog::CatalogEntry>, ai_tool::CatalogError> {
    catalog::parse_str(text, Path::new("tools.jsonl"))
}

/// A catalog line declaring `name` with `parameters`.
fn line(name: &str, parameters: &Value) -> String {
    json!({ "name": name, "description": "A tool", "parameters": parameters }).to_string()
}

/// An executor of the catalog `lines`, plus `add`.
fn catalog_executor(lines: &[String]) -> Executor {
    let text = lines.join("\n");
    let entries = parse(&text).expect("the catalog loads");
    Executor::builder()
        .catalog(entries)
        .build()
        .expect("the executor builds")
}

/// An executor whose one dynamic tool `t` echoes its arguments, under `schema`.
fn dynamic_executor(schema: Value) -> Result<Executor, ai_tool::BuildError> {
    executor_of([echo("t", schema)])
}

/// The next call works: `add` answers.
fn next_call_works(exec: &Executor) {
    let out = block_on(exec.execute("add", json!({ "a": 2, "b": 40 }))).expect("add answers");
    assert_eq!(out.to_text(), "42");
}

// JSON nesting.

#[test]
fn a_catalog_line_nested_100_000_deep_is_a_line_error_naming_the_limit() {
    let deep = format!(
        r#"{{"name":"t","description":"d","parameters":{{"type":"object","properties":{{"a":{{"enum":[{}1{}]}}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let text = format!("{}\n{deep}", line("ok", &json!({ "type": "object" })));
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.starts_with("tools.jsonl:2: malformed JSON"), "{err}");
    assert!(err.contains("128 or more levels deep"), "{err}");
    assert!(err.len() < 300, "{} bytes", err.len());
}

#[test]
fn a_dynamic_tools_schema_nested_100_000_deep_is_a_build_error_naming_the_limit() {
    on_small_stack(|| {
        let mut deep = json!({ "type": "string" });
        for _ in 0..100_000 {
            deep = object("items", deep);
        }
        let schema = object("type", json!("object"));
        let mut schema = match schema {
            Value::Object(map) => map,
            _ => unreachable!(),
        };
        schema.insert("properties".into(), object("a", deep));
        let err = dynamic_executor(Value::Object(schema))
            .unwrap_err()
            .to_string();
        assert!(err.contains("SchemaLimits::depth"), "{err}");
        assert!(err.contains("`t`"), "{err}");
        let exec = dynamic_executor(json!({ "type": "object" })).expect("the next build works");
        assert!(block_on(exec.execute("t", json!({}))).is_ok());
    });
}

#[test]
fn a_provider_response_nested_100_000_deep_is_refused_naming_the_limit() {
    on_small_stack(|| {
        for format in Format::ALL {
            let response = object("content", nested_arrays(100_000));
            let err = parse_calls(format, &response, &Aliases::default()).unwrap_err();
            assert!(
                matches!(err, ParseError::TooDeep { limit: 128, .. }),
                "{format}: {err:?}"
            );
            assert!(err.to_string().contains("ResponseLimits::depth"), "{err}");
            let err = provider::parse_hosted_results(format, &response).unwrap_err();
            assert!(
                matches!(err, ParseError::TooDeep { .. }),
                "{format}: {err:?}"
            );
            dismantle(response);
        }
        let text = format!(
            r#"{{"content":[{{"type":"tool_use","id":"a","name":"add","input":{}1{}}}]}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let err = read_response(Format::Anthropic, &text, &ResponseLimits::default()).unwrap_err();
        assert!(matches!(err, ParseError::TooDeep { .. }), "{err:?}");
        // The next response is read.
        let fine =
            r#"{"content":[{"type":"tool_use","id":"a","name":"add","input":{"a":1,"b":2}}]}"#;
        let response = read_response(Format::Anthropic, fine, &ResponseLimits::default()).unwrap();
        let calls = parse_calls(Format::Anthropic, &response, &Aliases::default()).unwrap();
        assert_eq!(calls[0].arguments, json!({ "a": 1, "b": 2 }));
    });
}

#[test]
fn arguments_text_nested_100_000_deep_in_a_response_is_refused_when_executed() {
    let exec = Executor::builder().build().unwrap();
    let arguments = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let response = json!({ "choices": [{ "message": { "tool_calls": [
        { "id": "a", "type": "function", "function": { "name": "add", "arguments": arguments } },
        { "id": "b", "type": "function", "function": { "name": "add", "arguments": "{\"a\":1,\"b\":2}" } }
    ]}}]});
    let calls = parse_calls(Format::OpenAiChat, &response, &Aliases::default()).unwrap();
    let results = block_on(exec.execute_calls(&calls));
    let err = results[0].result.as_ref().unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    assert!(
        err.to_model_text().len() < 1_000,
        "{}",
        err.to_model_text().len()
    );
    assert_eq!(results[1].result.as_ref().unwrap().to_text(), "3");
}

// Schemas a catalog may carry.

#[test]
fn a_catastrophic_pattern_against_40_as_and_a_bang_finishes_with_a_verdict() {
    let hostile = format!("{}!", "a".repeat(40));
    for pattern in ["^(a+)+$", "^(?=(a+)+$)a+$", "^(a|aa)+$", "(a*)*b"] {
        let exec = catalog_executor(&[line(
            "p",
            &json!({ "type": "object", "properties": { "s": { "type": "string", "pattern": pattern } } }),
        )]);
        let err = exec.validate("p", json!({ "s": hostile })).unwrap_err();
        assert_eq!(
            err.kind(),
            ToolErrorKind::InvalidArguments,
            "{pattern}: {err}"
        );
        if !pattern.ends_with('b') {
            assert!(
                exec.validate("p", json!({ "s": "aaaa" })).is_ok(),
                "{pattern}"
            );
        }
        next_call_works(&exec);
    }
}

#[test]
fn a_catastrophic_pattern_in_a_dynamic_tool_finishes_with_a_verdict() {
    let exec = dynamic_executor(json!({
        "type": "object",
        "properties": { "s": { "type": "string", "pattern": "^(?=(a+)+$)a+$" } }
    }))
    .unwrap();
    let hostile = format!("{}!", "a".repeat(40));
    let err = block_on(exec.execute("t", json!({ "s": hostile }))).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    let out = block_on(exec.execute("t", json!({ "s": "aaa" }))).unwrap();
    assert_eq!(out.to_text(), r#"{"s":"aaa"}"#);
}

#[test]
fn a_ref_to_a_remote_url_is_refused_at_load_and_never_fetched() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/schema.json", listener.local_addr().unwrap());
    let schemas = [
        json!({ "type": "object", "properties": { "a": { "$ref": url } } }),
        json!({ "type": "object", "properties": { "a": { "$ref": "file:///etc/passwd" } } }),
        json!({ "$id": url, "type": "object", "properties": { "a": { "$ref": "other.json" } } }),
        json!({ "type": "object", "$defs": { "x": { "$dynamicRef": url } } }),
    ];
    for schema in &schemas {
        let err = parse(&line("r", schema)).unwrap_err().to_string();
        assert!(err.contains("points outside the schema"), "{schema}: {err}");
        assert!(err.contains("nothing is fetched"), "{err}");
        let err = dynamic_executor(schema.clone()).unwrap_err().to_string();
        assert!(err.contains("points outside the schema"), "{schema}: {err}");
    }
    // A meta-schema of the schema's own choosing is not fetched either.
    let custom_meta = json!({ "$schema": url, "type": "object" });
    let verdict = parse(&line("m", &custom_meta));
    let exec = dynamic_executor(custom_meta.clone());
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("something connected to {url}: {other:?}"),
    }
    // Refused at load, or loaded without it: either way a clear answer.
    if let Err(e) = verdict {
        assert!(e.to_string().starts_with("tools.jsonl:1:"), "{e}");
        assert!(exec.is_err());
    }
    next_call_works(&catalog_executor(&[]));
}

#[test]
fn ref_cycles_and_a_ref_to_the_root_give_a_verdict_and_the_next_call_works() {
    let recursive = json!({
        "type": "object",
        "properties": { "next": { "$ref": "#" }, "n": { "type": "integer" } }
    });
    let exec = catalog_executor(&[line("list", &recursive)]);
    assert!(exec
        .validate("list", json!({ "next": { "next": { "n": 1 } } }))
        .is_ok());
    let err = exec
        .validate("list", json!({ "next": { "next": { "n": "x" } } }))
        .unwrap_err();
    assert!(err.to_string().contains("/next/next/n"), "{err}");
    next_call_works(&exec);

    // Refs that lead back to where they started without going into the value: validating
    // would apply the schema to the same value forever. Refused at load, naming the ref.
    let loops = [
        (json!({ "type": "object", "$ref": "#" }), "`#`"),
        (
            json!({ "type": "object", "allOf": [{ "$ref": "#" }] }),
            "`#`",
        ),
        (
            json!({
                "type": "object",
                "properties": { "a": { "$ref": "#/$defs/A" } },
                "$defs": { "A": { "$ref": "#/$defs/B" }, "B": { "$ref": "#/$defs/A" } }
            }),
            "`#/$defs/",
        ),
        (
            json!({
                "type": "object",
                "properties": { "a": { "$ref": "#/$defs/A" } },
                "$defs": { "A": { "anyOf": [{ "$ref": "#/$defs/A" }, { "type": "string" }] } }
            }),
            "`#/$defs/A`",
        ),
    ];
    for (schema, named) in loops {
        let err = parse(&line("loop", &schema)).unwrap_err().to_string();
        assert!(
            err.contains("leads back to where it started"),
            "{schema}: {err}"
        );
        assert!(err.contains(named), "{schema}: {err}");
        let err = dynamic_executor(schema.clone()).unwrap_err().to_string();
        assert!(err.contains("leads back"), "{schema}: {err}");
    }
    next_call_works(&exec);
}

#[test]
fn refs_that_double_at_each_level_are_refused_at_load_naming_the_limit() {
    let mut defs = Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({ "type": "array", "items": [{ "$ref": next }, { "$ref": next }] }),
        );
    }
    defs.insert("d40".into(), json!({ "type": "string" }));
    let schema = json!({
        "type": "object",
        "properties": { "x": { "$ref": "#/$defs/d0" } },
        "$defs": defs
    });
    let err = parse(&line("bomb", &schema)).unwrap_err().to_string();
    assert!(err.contains("SchemaLimits::expanded_subschemas"), "{err}");
    for profile in [
        ai_tool::profile::gemini(&schema).map(drop),
        ai_tool::profile::openai_strict(&schema).map(drop),
        ai_tool::profile::anthropic_strict(&schema).map(drop),
    ] {
        let err = profile.unwrap_err().to_string();
        assert!(err.contains("SchemaLimits::expanded_subschemas"), "{err}");
    }
}

#[test]
fn type_or_required_of_the_wrong_kind_is_a_line_error() {
    for parameters in [
        json!({ "type": 5 }),
        json!({ "type": "object", "properties": { "a": { "type": ["string", 5] } } }),
        json!({ "type": "object", "properties": { "a": { "type": "strnig" } } }),
        json!({ "type": "object", "required": "a" }),
        json!({ "type": "object", "required": [1] }),
        json!({ "type": "object", "required": ["a", "a"] }),
        json!({ "type": "object", "properties": [] }),
        json!({ "type": "object", "properties": { "a": 5 } }),
    ] {
        let err = parse(&line("w", &parameters)).unwrap_err().to_string();
        assert!(err.starts_with("tools.jsonl:1:"), "{parameters}: {err}");
        let build = dynamic_executor(parameters.clone());
        assert!(build.is_err(), "{parameters}");
    }
    next_call_works(&catalog_executor(&[]));
}

#[test]
fn an_enum_of_50_000_members_gives_a_verdict_and_a_short_message() {
    let members: Vec<Value> = (0..50_000).map(|i| json!(format!("m{i}"))).collect();
    let exec = catalog_executor(&[line(
        "pick",
        &json!({ "type": "object", "properties": { "m": { "enum": members } }, "required": ["m"] }),
    )]);
    assert!(exec.validate("pick", json!({ "m": "m49999" })).is_ok());
    let err = exec.validate("pick", json!({ "m": "m50000" })).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    let text = err.to_model_text();
    assert!(text.contains("/m"), "{text}");
    assert!(text.len() < 5_000, "{} bytes", text.len());
    next_call_works(&exec);
}

#[test]
fn multiple_of_with_floats_gives_the_decimal_verdict() {
    let exec = catalog_executor(&[
        line(
            "tenth",
            &json!({ "type": "object", "properties": { "x": { "type": "number", "multipleOf": 0.1 } } }),
        ),
        line(
            "cent",
            &json!({ "type": "object", "properties": { "x": { "type": "number", "multipleOf": 0.01 } } }),
        ),
        line(
            "tiny",
            &json!({ "type": "object", "properties": { "x": { "multipleOf": 1e-300 } } }),
        ),
    ]);
    for (tool, x, valid) in [
        ("tenth", json!(0.3), true),
        ("tenth", json!(0.7), true),
        ("tenth", json!(3), true),
        ("tenth", json!(0.35), false),
        ("cent", json!(19.99), true),
        ("cent", json!(0.075), false),
    ] {
        let verdict = exec.validate(tool, json!({ "x": x }));
        assert_eq!(verdict.is_ok(), valid, "{tool}: {x}: {verdict:?}");
    }
    // Huge quotients: a verdict, whichever it is.
    for x in [json!(1e308), json!(u64::MAX), json!(5e-324)] {
        let _verdict = exec.validate("tiny", json!({ "x": x }));
    }
    for bad in [json!(0), json!(-0.5), json!("0.1")] {
        let parameters = json!({ "type": "object", "properties": { "x": { "multipleOf": bad } } });
        assert!(parse(&line("m", &parameters)).is_err(), "{bad}");
    }
    next_call_works(&exec);
}

#[test]
fn numbers_beyond_f64_and_u64_are_refused_or_judged_exactly() {
    let exec = Executor::builder().build().unwrap();
    for text in [
        r#"{"a": 1e400, "b": 1}"#,
        r#"{"a": -1e400, "b": 1}"#,
        r#"{"a": 18446744073709551616, "b": 1}"#,
        r#"{"a": -9223372036854775809, "b": 1}"#,
        r#"{"a": 9223372036854775808, "b": 1}"#,
    ] {
        let err = block_on(exec.execute("add", text)).unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{text}: {err}");
    }
    let out = block_on(exec.execute("add", r#"{"a": 9223372036854775807, "b": -1}"#)).unwrap();
    assert_eq!(out.to_text(), "9223372036854775806");
    // In a catalog: a bound beyond f64 is malformed JSON; one at u64's edge is kept exactly.
    let beyond = r#"{"name":"n","description":"N","parameters":{"type":"object","properties":{"x":{"maximum":1e400}}}}"#;
    assert!(parse(beyond)
        .unwrap_err()
        .to_string()
        .contains("malformed JSON"));
    let edge = catalog_executor(&[line(
        "u",
        &json!({ "type": "object", "properties": { "x": { "type": "integer", "maximum": u64::MAX } } }),
    )]);
    assert!(edge.validate("u", json!({ "x": u64::MAX })).is_ok());
    assert!(edge.validate("u", json!({ "x": -1 })).is_ok());
    let over: Value = serde_json::from_str(r#"{"x": 18446744073709551616}"#).unwrap();
    assert!(edge.validate("u", &over).is_err());
    next_call_works(&exec);
}

/// Whether a JSON error names the bad escape: a lone trailing surrogate is "lone leading
/// surrogate in hex escape" to `serde_json`, a lone leading one "unexpected end of hex escape".
fn names_the_escape(message: &str) -> bool {
    message.contains("surrogate") || message.contains("hex escape")
}

#[test]
fn lone_surrogates_are_malformed_json_wherever_they_come() {
    let exec = Executor::builder().build().unwrap();
    let text = r#"{"a": 1, "b": 2, "c": "\ud800"}"#;
    let err = block_on(exec.execute("add", text)).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    assert!(names_the_escape(&err.to_string()), "{err}");
    let catalog_line = r#"{"name":"s","description":"\udc00 tool"}"#;
    let err = parse(catalog_line).unwrap_err().to_string();
    assert!(names_the_escape(&err), "{err}");
    let response =
        r#"{"content":[{"type":"tool_use","id":"a","name":"add","input":{"a":"\ud800"}}]}"#;
    let err = read_response(Format::Anthropic, response, &ResponseLimits::default()).unwrap_err();
    assert!(names_the_escape(&err.to_string()), "{err}");
    // OpenAI sends arguments as JSON text: the call keeps it, and executing it says why.
    let response = json!({ "choices": [{ "message": { "tool_calls": [
        { "id": "a", "type": "function", "function": { "name": "add", "arguments": r#"{"a":1,"b":"\udfff"}"# } }
    ]}}]});
    let calls = parse_calls(Format::OpenAiChat, &response, &Aliases::default()).unwrap();
    let results = block_on(exec.execute_calls(&calls));
    let err = results[0].result.as_ref().unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    next_call_works(&exec);
}

#[test]
fn duplicate_keys_take_the_last_value_in_every_stage() {
    let exec = catalog_executor(&[line(
        "dup",
        &json!({ "type": "object", "properties": { "a": { "type": "integer" } } }),
    )]);
    let out = block_on(exec.execute("add", r#"{"a": 1, "b": 3, "a": 2}"#)).unwrap();
    assert_eq!(out.to_text(), "5");
    let err = block_on(exec.execute("add", r#"{"a": 1, "b": 3, "a": "x"}"#)).unwrap_err();
    assert!(err.to_string().contains("/a"), "{err}");
    let value: Value = serde_json::from_str(r#"{"a": "x", "a": 7}"#).unwrap();
    assert!(exec.validate("dup", &value).is_ok());
    let entries = parse(r#"{"name":"first","name":"second","description":"D"}"#).unwrap();
    assert_eq!(entries[0].spec.name, "second");
    next_call_works(&exec);
}

#[test]
fn a_megabyte_long_tool_name_gets_a_short_error_everywhere() {
    let long = "a".repeat(1 << 20);
    let exec = Executor::builder().build().unwrap();
    let err = block_on(exec.execute(&long, json!({}))).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::UnknownTool);
    assert!(
        err.to_string().len() < 300,
        "{} bytes",
        err.to_string().len()
    );
    assert!(err.to_model_text().len() < 300);
    assert!(err.to_string().contains("more characters"), "{err}");
    let err = parse(&line(&long, &json!({ "type": "object" })))
        .unwrap_err()
        .to_string();
    assert!(err.len() < 300, "{err}");
    let err = dynamic_executor_named(&long).unwrap_err().to_string();
    assert!(err.len() < 500, "{err}");
    let err = catalog::parse_str_with(
        &format!(r#"{{"name":"{long}","description":"D"}}"#),
        Path::new("t.jsonl"),
        NameRule::Label,
    )
    .unwrap_err()
    .to_string();
    assert!(err.len() < 300, "{err}");
    next_call_works(&exec);
}

fn dynamic_executor_named(name: &str) -> Result<Executor, ai_tool::BuildError> {
    Executor::builder()
        .tool(echo(name, json!({ "type": "object" })))
        .build()
}

#[test]
fn a_100_000_character_property_name_gets_a_short_error() {
    let exec = Executor::builder().build().unwrap();
    let key = "k".repeat(100_000);
    let err = block_on(exec.execute("add", object(&key, json!(1)))).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        err.to_model_text().len() < 5_000,
        "{}",
        err.to_model_text().len()
    );
    next_call_works(&exec);
}

// Resource limits, each configurable and named in its error.

#[test]
fn a_catalog_line_over_the_line_limit_is_refused_naming_the_limit() {
    let long = line(
        "big",
        &json!({ "type": "object", "description": "x".repeat(2_000) }),
    );
    let limits = CatalogLimits {
        line_bytes: 1_000,
        ..CatalogLimits::default()
    };
    let err = catalog::parse_str_within(&long, Path::new("t.jsonl"), NameRule::Wide, &limits)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("t.jsonl:1: the line is "), "{err}");
    assert!(
        err.contains("CatalogLimits::line_bytes allows 1000"),
        "{err}"
    );
    let file = TempFile::with_lines("long-line.jsonl", &[&long]);
    let err = Executor::builder()
        .catalog_file(file.path())
        .catalog_line_bytes(1_000)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("CatalogLimits::line_bytes"), "{err}");
    let exec = Executor::builder()
        .catalog_file(file.path())
        .build()
        .expect("within the default");
    assert!(exec.spec("big").is_some());
}

#[test]
fn a_response_over_the_size_limit_is_refused_unparsed_naming_the_limit() {
    let text = format!(
        r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
        "x".repeat(5_000)
    );
    let limits = ResponseLimits {
        bytes: 4_096,
        ..ResponseLimits::default()
    };
    let err = read_response(Format::Anthropic, &text, &limits).unwrap_err();
    assert!(
        matches!(err, ParseError::TooLarge { bytes, limit: 4_096, .. } if bytes == text.len()),
        "{err:?}"
    );
    assert!(err.to_string().contains("ResponseLimits::bytes"), "{err}");
    assert!(read_response(Format::Anthropic, &text, &ResponseLimits::default()).is_ok());
    let shallow = ResponseLimits {
        depth: 3,
        ..ResponseLimits::default()
    };
    let err = read_response(Format::Anthropic, r#"{"content":[[[]]]}"#, &shallow).unwrap_err();
    assert!(
        matches!(err, ParseError::TooDeep { limit: 3, .. }),
        "{err:?}"
    );
}

#[test]
fn schema_limits_are_configurable_and_named_in_the_build_error() {
    let schema = json!({ "type": "object", "properties": { "a": { "type": "array", "items": { "type": "array" } } } });
    let tool = echo("t", schema.clone());
    let err = Executor::builder()
        .tool(tool.clone())
        .schema_limits(SchemaLimits {
            depth: 4,
            ..SchemaLimits::default()
        })
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("SchemaLimits::depth allows fewer than 4"),
        "{err}"
    );
    let err = Executor::builder()
        .tool(tool.clone())
        .schema_limits(SchemaLimits {
            expanded_subschemas: 3,
            ..SchemaLimits::default()
        })
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("more than 3 subschemas"), "{err}");
    assert!(Executor::builder().tool(tool).build().is_ok());
}
