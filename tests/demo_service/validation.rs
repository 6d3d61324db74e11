//! Arguments checked against the schema: accepted values, every violation named, unknown tools.

use super::*;

#[tokio::test]
async fn complex_input_accepts_valid_and_boundary_values() {
    let exec = executor();
    let mut args = complex_ok();
    args["nullable_but_required"] = json!("present");
    args["max_length_10"] = json!("0123456789");
    args["min_length_5"] = json!("12345");
    args["categories"] = json!(["Room", "Room", "Bike", "Plane", "Bike"]);
    let out = exec
        .execute("check", json!({ "input": args }))
        .await
        .expect("valid and boundary values are accepted");
    assert_eq!(
        out.structured,
        Some(json!({ "kind": "Bike", "categories": 5 })),
        "the tool saw every category"
    );
}

/// The violations of a bad `check` call. The arguments are given as a value, as a borrowed
/// value and as JSON text, which take different paths through validation; all three must
/// report the same.
async fn violations(args: Value) -> Vec<String> {
    let exec = executor();
    let args = json!({ "input": args });
    let as_text = exec.execute("check", args.to_string()).await;
    let borrowed = exec.execute("check", &args).await;
    let owned = exec.execute("check", args).await;
    let [owned, borrowed, as_text] = [owned, borrowed, as_text].map(|result| match result {
        Err(ToolError::InvalidArguments { violations, .. }) => violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        other => panic!("expected invalid arguments, got {other:?}"),
    });
    assert_eq!(owned, borrowed, "a borrowed value is reported alike");
    assert_eq!(owned, as_text, "JSON text is reported alike");
    owned
}

#[tokio::test]
async fn valid_arguments_give_one_result_whatever_form_they_come_in() {
    let exec = executor();
    let args = json!({ "input": complex_ok() });
    let expected = exec.execute("check", args.clone()).await.unwrap();
    let text = args.to_string();
    for output in [
        exec.execute("check", &args).await.unwrap(),
        exec.execute("check", text.clone()).await.unwrap(),
        exec.execute("check", text.as_str()).await.unwrap(),
        exec.execute("check", &text).await.unwrap(),
        exec.execute("check", std::borrow::Cow::Borrowed(text.as_str()))
            .await
            .unwrap(),
    ] {
        assert_eq!(output, expected);
    }
    // Keys in any order and insignificant whitespace.
    let text = r#" { "b" : 2 ,
        "a": -40 } "#;
    assert_eq!(exec.execute("add", text).await.unwrap().to_text(), "-38");
}

#[tokio::test]
async fn rejects_string_longer_than_max_length() {
    let mut args = complex_ok();
    args["max_length_10"] = json!("abcdefghijkl");
    assert_eq!(
        violations(args).await,
        [r#"/input/max_length_10: "abcdefghijkl" is longer than 10 characters"#]
    );
}

#[tokio::test]
async fn rejects_string_shorter_than_min_length() {
    let mut args = complex_ok();
    args["min_length_5"] = json!("abc");
    assert_eq!(
        violations(args).await,
        [r#"/input/min_length_5: "abc" is shorter than 5 characters"#]
    );
}

#[tokio::test]
async fn rejects_enum_value_outside_the_enum() {
    let mut args = complex_ok();
    args["kind"] = json!("Boat");
    let got = violations(args).await;
    assert!(
        got.len() == 1 && got[0].starts_with("/input/kind: \"Boat\" is not one of"),
        "{got:?}"
    );
}

#[tokio::test]
async fn rejects_too_few_and_too_many_items() {
    let mut args = complex_ok();
    args["categories"] = json!(["Room"]);
    assert_eq!(
        violations(args.clone()).await,
        [r#"/input/categories: ["Room"] has less than 2 items"#]
    );
    args["categories"] = json!(["Room", "Room", "Room", "Room", "Room", "Room"]);
    let got = violations(args).await;
    assert!(
        got.len() == 1
            && got[0].starts_with("/input/categories:")
            && got[0].contains("more than 5 items"),
        "{got:?}"
    );
}

#[tokio::test]
async fn rejects_missing_nullable_but_required_property() {
    let mut args = complex_ok();
    args.as_object_mut()
        .unwrap()
        .remove("nullable_but_required");
    assert_eq!(
        violations(args).await,
        [r#"/input: "nullable_but_required" is a required property"#]
    );
}

#[tokio::test]
async fn reports_every_violation_at_once() {
    let args = json!({
        "nullable_but_required": 5,
        "max_length_10": "abcdefghijkl",
        "min_length_5": "abc",
        "kind": "Boat",
        "categories": [],
        "extra": "refused: a nested struct's object is closed"
    });
    assert_eq!(violations(args).await.len(), 6);
}

#[tokio::test]
async fn rejects_wrong_types_unknown_properties_and_bad_json_text() {
    let exec = executor();
    let err = exec
        .execute("add", json!({ "a": "1", "b": 2, "c": 3 }))
        .await
        .unwrap_err();
    let text = err.to_model_text();
    assert!(text.contains(r#"/a: "1" is not an integer"#), "{text}");
    assert!(
        text.contains(r#"/: unknown property "c"; the allowed ones are a, b"#),
        "{text}"
    );
    let err = exec.execute("add", "{\"a\": 1,").await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    let err = exec
        .execute("add", json!({ "a": 1.5, "b": 2 }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/a"), "{err}");
    let err = exec
        .execute("get_other", json!({ "id": -1 }))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("/id: -1 is less than the minimum of 0"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_tool_suggests_close_names() {
    let err = executor().execute("get_dmeo", json!({})).await.unwrap_err();
    match &err {
        ToolError::UnknownTool { suggestions, .. } => assert_eq!(suggestions[0], "get_demo"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_model_text().contains("Did you mean `get_demo`"));
}

#[test]
fn validate_checks_without_running() {
    let exec = executor();
    assert!(exec.validate("add", json!({"a": 1, "b": 2})).is_ok());
    assert!(exec.validate("add", json!({"a": 1})).is_err());
    assert!(matches!(
        exec.validate("nope", json!({})),
        Err(ToolError::UnknownTool { .. })
    ));
}

#[tokio::test]
async fn validate_takes_json_text_as_execute_does() {
    let exec = executor();
    assert!(exec.validate("add", r#"{"a": 1, "b": 2}"#).is_ok());
    let missing = exec.validate("add", r#"{"a": 1}"#).unwrap_err();
    let run = exec.execute("add", r#"{"a": 1}"#).await.unwrap_err();
    let from_value = exec.validate("add", json!({"a": 1})).unwrap_err();
    assert_eq!(missing.to_string(), run.to_string(), "execute's verdict");
    assert_eq!(from_value.to_string(), run.to_string(), "text or value");
    let broken = exec.validate("add", "{\"a\": 1,").unwrap_err();
    let ToolError::InvalidArguments { violations, .. } = &broken else {
        panic!("{broken:?}");
    };
    assert!(violations[0].message.contains("EOF"), "{violations:?}");

    // A model's call: arguments as a JSON string are read as text, as execute_call reads them.
    let as_text = ToolCall::new("c1", "add", json!(r#"{"a": 1, "b": 2}"#));
    assert!(exec.validate_call(&as_text).is_ok());
    assert!(exec
        .execute_call(&as_text, &CallOptions::default())
        .await
        .is_ok());
    let as_value = ToolCall::new("c2", "add", json!({"a": 1}));
    assert!(matches!(
        exec.validate_call(&as_value),
        Err(ToolError::InvalidArguments { .. })
    ));
}
