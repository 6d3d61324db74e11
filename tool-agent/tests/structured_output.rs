//! Each client asks for a request's answer schema (`response_format`) and temperature the way
//! its API does.

use serde_json::{json, Value};
use tool_agent::{
    AnthropicModel, GeminiModel, Message, ModelRequest, OpenAiChatModel, OpenAiResponsesModel,
    ResponseFormat,
};

fn request() -> ModelRequest {
    let mut request = ModelRequest::new(vec![Message::user("Score the search tool for: pasta")]);
    request.instructions = Some("You score tools.".into());
    request.response_format = Some(ResponseFormat::new(
        "search_answer",
        json!({
            "type": "object",
            "properties": {
                "score": { "type": "integer", "minimum": 0, "maximum": 100 },
                "search_query": { "type": "string" }
            },
            "required": ["score"]
        }),
    ));
    request.temperature = Some(0.0);
    request
}

#[test]
fn openai_chat_sends_a_strict_json_schema_response_format() {
    let body: Value =
        serde_json::from_slice(&OpenAiChatModel::new("m").body(&request()).unwrap()).unwrap();
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "search_answer");
    assert_eq!(format["json_schema"]["strict"], true);
    // Strict: every property required, the optional one nullable.
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["score", "search_query"])
    );
    assert_eq!(body["temperature"], 0.0);
}

#[test]
fn openai_responses_sends_text_format() {
    let body = OpenAiResponsesModel::new("m").body(&request());
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["text"]["format"]["name"], "search_answer");
    assert_eq!(body["text"]["format"]["strict"], true);
    assert_eq!(body["temperature"], 0.0);
}

#[test]
fn anthropic_writes_the_schema_into_the_system_prompt() {
    let body = AnthropicModel::new("m").body(&request());
    let system = body["system"].as_str().unwrap();
    assert!(
        system.starts_with("You score tools.\n\nAnswer with one JSON object"),
        "{system}"
    );
    assert!(
        system.contains(r#""search_query":{"type":"string"}"#),
        "{system}"
    );
    assert_eq!(body["temperature"], 0.0);
}

#[test]
fn gemini_sets_the_response_mime_type_and_schema() {
    let body = GeminiModel::new("m").body(&request());
    let config = &body["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(config["responseSchema"]["type"], "object");
    assert_eq!(
        config["responseSchema"]["properties"]["score"]["type"],
        "integer"
    );
    assert_eq!(config["temperature"], 0.0);
}

#[test]
fn without_a_response_format_nothing_is_added() {
    let plain = ModelRequest::new(vec![Message::user("hi")]);
    let chat: Value =
        serde_json::from_slice(&OpenAiChatModel::new("m").body(&plain).unwrap()).unwrap();
    assert_eq!(chat.get("response_format"), None);
    assert_eq!(chat.get("temperature"), None);
    let gemini = GeminiModel::new("m").body(&plain);
    assert_eq!(gemini.get("generationConfig"), None::<&Value>);
}
