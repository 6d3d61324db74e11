//! What a method returns, as `ToolOutput`: returns of every kind, converters, errors, context.

use super::*;

#[tokio::test]
async fn unit_return_gives_empty_output_and_runs_the_method() {
    let exec = executor();
    let out = exec
        .execute("do_something", json!({ "arg": "hi" }))
        .await
        .unwrap();
    assert_eq!(out, ToolOutput::empty());
    assert_eq!(
        exec.services()
            .get::<DemoService>()
            .unwrap()
            .calls
            .load(Ordering::SeqCst),
        1
    );
}

#[tokio::test]
async fn converter_beside_the_method_gets_value_and_context() {
    let out = executor()
        .execute("get_demo", r#"{"name": "x", "value": 3}"#)
        .await
        .unwrap();
    assert_eq!(out.to_text(), "[get_demo] x = 3");
}

#[tokio::test]
async fn converter_defined_elsewhere_is_found_by_tool_name() {
    let out = executor()
        .execute("get_other", json!({ "id": 9 }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "other #9 via get_other");
}

#[tokio::test]
async fn serialize_return_becomes_structured_json() {
    let out = executor()
        .execute("check", json!({ "input": complex_ok() }))
        .await
        .unwrap();
    assert_eq!(
        out.structured,
        Some(json!({ "kind": "Bike", "categories": 2 }))
    );
    assert_eq!(
        executor()
            .execute("add", json!({"a": 2, "b": -5}))
            .await
            .unwrap()
            .to_text(),
        "-3"
    );
}

#[tokio::test]
async fn string_return_is_text_and_defaults_apply() {
    let exec = executor();
    let out = exec
        .execute("greet", json!({ "name": "Ann" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Ann!");
    let out = exec
        .execute("greet", json!({ "name": "Ann", "times": 2, "title": "Dr" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Dr Ann! Hello, Dr Ann!");
    let out = exec
        .execute("greet", json!({ "name": "Ann", "title": null }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Ann!");
    assert_eq!(
        exec.execute("motto", json!({})).await.unwrap().to_text(),
        "borrowed"
    );
}

#[tokio::test]
async fn err_result_is_a_tool_error_keeping_the_typed_error() {
    let mut args = complex_ok();
    args["max_length_10"] = json!("refuse");
    let err = executor()
        .execute("check", json!({ "input": args }))
        .await
        .unwrap_err();
    assert_eq!(
        err.downcast_ref::<CheckError>(),
        Some(&CheckError("long enough".into()))
    );
    assert_eq!(
        err.to_model_text(),
        "`check` failed: check refused: long enough"
    );
}

#[tokio::test]
async fn context_carries_call_id_and_provided_services() {
    let options = CallOptions::default().with_call_id("call_7");
    let out = executor()
        .execute_with("search", json!({ "query": "q" }), &options)
        .await
        .unwrap();
    assert_eq!(
        out.structured,
        Some(json!({ "query": "q", "limit": null, "call_id": "call_7", "answer": 42 }))
    );
}
