//! `ToolChoice::Allowed`: OpenAI's `allowed_tools` (Chat and Responses) and Gemini's
//! `allowedFunctionNames` keep every declaration and restrict the calls; Anthropic and Bedrock,
//! which have no such choice, are sent the allowed tools' declarations alone.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_agent::{AllowedMode, Message, ModelRequest, OfferedTools, ToolChoice};
use tool_core::provider::{DeclareOptions, Format};
use tool_core::ToolSpec;
use tool_providers::{
    AnthropicModel, BedrockModel, GeminiModel, OpenAiChatModel, OpenAiResponsesModel,
};

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("The {name} tool."),
        parameters: json!({ "type": "object", "properties": {} }),
        output_schema: None,
        metadata: Default::default(),
    }
}

/// A request offering `search`, `fetch` and `delete`, allowing the first two.
fn request(format: Format, mode: AllowedMode) -> ModelRequest {
    let mut request = ModelRequest::new(vec![Message::user("Find it")]);
    request.tools = Arc::new(OfferedTools::new(
        vec![spec("search"), spec("fetch"), spec("delete")],
        Some(format),
        &DeclareOptions::default(),
    ));
    request.tool_choice = ToolChoice::Allowed(vec!["search".into(), "fetch".into()], mode);
    request
}

fn names(tools: &Value, pointer: &str) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.pointer(pointer).unwrap().as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn openai_chat_keeps_every_declaration_and_sends_allowed_tools() {
    let model = OpenAiChatModel::new("m");
    let body: Value = serde_json::from_slice(
        &model
            .body(&request(Format::OpenAiChat, AllowedMode::Required))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        names(&body["tools"], "/function/name"),
        ["search", "fetch", "delete"]
    );
    assert_eq!(
        body["tool_choice"],
        json!({
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "required",
                "tools": [
                    { "type": "function", "function": { "name": "search" } },
                    { "type": "function", "function": { "name": "fetch" } }
                ]
            }
        })
    );
}

#[test]
fn openai_responses_keeps_every_declaration_and_sends_allowed_tools() {
    let body =
        OpenAiResponsesModel::new("m").body(&request(Format::OpenAiResponses, AllowedMode::Auto));
    assert_eq!(
        names(&body["tools"], "/name"),
        ["search", "fetch", "delete"]
    );
    assert_eq!(
        body["tool_choice"],
        json!({
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [
                { "type": "function", "name": "search" },
                { "type": "function", "name": "fetch" }
            ]
        })
    );
}

#[test]
fn gemini_names_the_allowed_functions_validated_or_any() {
    let model = GeminiModel::new("gemini-3-flash");
    for (mode, word) in [
        (AllowedMode::Auto, "VALIDATED"),
        (AllowedMode::Required, "ANY"),
    ] {
        let body = model.body(&request(Format::Gemini, mode));
        assert_eq!(
            names(&body["tools"][0]["functionDeclarations"], "/name"),
            ["search", "fetch", "delete"]
        );
        assert_eq!(
            body["toolConfig"]["functionCallingConfig"],
            json!({ "mode": word, "allowedFunctionNames": ["search", "fetch"] })
        );
    }
}

#[test]
fn gemini_asks_for_validated_calls_request_wide_when_told() {
    let mut request = request(Format::Gemini, AllowedMode::Auto);
    request.tool_choice = ToolChoice::Auto;
    let plain = GeminiModel::new("gemini-3-flash").body(&request);
    assert_eq!(
        plain["toolConfig"]["functionCallingConfig"],
        json!({ "mode": "AUTO" })
    );
    let validated = GeminiModel::new("gemini-3-flash").with_validated_calls();
    let body = validated.body(&request);
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"],
        json!({ "mode": "VALIDATED" })
    );
    // The other choices are as always.
    request.tool_choice = ToolChoice::Required;
    assert_eq!(
        validated.body(&request)["toolConfig"]["functionCallingConfig"],
        json!({ "mode": "ANY" })
    );
}

#[test]
fn anthropic_is_sent_the_allowed_tools_alone() {
    let model = AnthropicModel::new("m");
    let body = model.body(&request(Format::Anthropic, AllowedMode::Required));
    assert_eq!(names(&body["tools"], "/name"), ["search", "fetch"]);
    assert_eq!(body["tool_choice"], json!({ "type": "any" }));
    let body = model.body(&request(Format::Anthropic, AllowedMode::Auto));
    assert_eq!(body["tool_choice"], json!({ "type": "auto" }));
}

#[test]
fn bedrock_is_sent_the_allowed_tools_alone() {
    let model = BedrockModel::new("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    let body = model.body(&request(Format::Bedrock, AllowedMode::Required));
    assert_eq!(
        names(&body["toolConfig"]["tools"], "/toolSpec/name"),
        ["search", "fetch"]
    );
    assert_eq!(body["toolConfig"]["toolChoice"], json!({ "any": {} }));
}
