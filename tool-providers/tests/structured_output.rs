//! Each client asks for a request's answer schema (`response_format`) and temperature the way
//! its API does (Anthropic's has no temperature).

use serde_json::{json, Value};
use tool_agent::{Message, ModelRequest, ResponseFormat};
use tool_providers::{AnthropicModel, GeminiModel, OpenAiChatModel, OpenAiResponsesModel};

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
    request.generation.temperature = Some(0.0);
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
fn anthropic_sends_output_config_format_and_no_temperature() {
    let body = AnthropicModel::new("m").body(&request());
    assert_eq!(body["system"], "You score tools.");
    let format = &body["output_config"]["format"];
    assert_eq!(format["type"], "json_schema", "{body}");
    assert_eq!(
        format["schema"]["properties"]["search_query"],
        json!({ "type": "string" }),
        "{body}"
    );
    // The Messages API has no temperature (the Anthropic SDK's parameters have none).
    assert!(body.get("temperature").is_none(), "{body}");
}

#[test]
fn anthropic_writes_a_schema_its_profile_cannot_say_into_the_system_prompt() {
    let mut request = request();
    // A map of any keys: Anthropic's structured output would need it encoded as pairs.
    request.response_format = Some(ResponseFormat::new(
        "scores",
        json!({
            "type": "object",
            "properties": {
                "scores": { "type": "object", "additionalProperties": { "type": "integer" } }
            },
            "required": ["scores"]
        }),
    ));
    let body = AnthropicModel::new("m").body(&request);
    assert!(body.get("output_config").is_none(), "{body}");
    let system = body["system"].as_str().unwrap();
    assert!(
        system.starts_with("You score tools.\n\nAnswer with one JSON object"),
        "{system}"
    );
    assert!(
        system.contains(r#""additionalProperties":{"type":"integer"}"#),
        "{system}"
    );
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
fn gemini_with_tools_asks_for_the_schema_in_the_instructions() {
    let mut with_tools = request();
    let spec = tool_core::ToolSpec {
        name: "search".into(),
        description: "Searches".into(),
        parameters: json!({ "type": "object" }),
        output_schema: None,
        metadata: Default::default(),
    };
    with_tools.tools = std::sync::Arc::new(tool_agent::OfferedTools::new(
        vec![spec],
        Some(tool_core::provider::Format::Gemini),
        &Default::default(),
    ));
    let body = GeminiModel::new("m").body(&with_tools);
    assert_eq!(body["generationConfig"].get("responseMimeType"), None);
    assert_eq!(body["generationConfig"]["temperature"], 0.0);
    let system = body["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(system.starts_with("You score tools."), "{system}");
    assert!(system.contains(r#""search_query""#), "{system}");
    assert!(body.get("tools").is_some());
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

// A run's checked answer (`RunOptions::output`).

mod run_output {
    use std::sync::Arc;

    use serde::Deserialize;
    use serde_json::json;
    use tool_agent::{
        Agent, Message, ModelResponse, ResponseFormat, RunFailure, RunOptions, ScriptedModel,
    };

    #[derive(Debug, Deserialize, PartialEq)]
    struct Weather {
        city: String,
        celsius: i64,
    }

    fn weather() -> ResponseFormat {
        ResponseFormat::new(
            "weather",
            json!({
                "type": "object",
                "properties": {
                    "city": { "type": "string" },
                    "celsius": { "type": "integer", "minimum": -90, "maximum": 60 }
                },
                "required": ["city", "celsius"],
                "additionalProperties": false
            }),
        )
    }

    #[tokio::test]
    async fn an_answer_off_the_schema_is_told_and_the_next_one_is_the_output() {
        let model = Arc::new(
            ScriptedModel::new()
                .then(ModelResponse::answer(r#"{"city": "Lyon", "celsius": 400}"#))
                .then(ModelResponse::answer(
                    "```json\n{\"city\": \"Lyon\", \"celsius\": 18}\n```",
                )),
        );
        let agent = Agent::builder(Arc::clone(&model)).build();
        let options = RunOptions::default().output(weather());
        let result = agent.run("Weather in Lyon?", &options).await.unwrap();
        assert_eq!(
            result.output_as::<Weather>().unwrap(),
            Weather {
                city: "Lyon".into(),
                celsius: 18
            }
        );
        assert_eq!(result.steps.len(), 2);
        let requests = model.requests();
        assert!(requests
            .iter()
            .all(|r| r.response_format.as_ref().map(|f| f.name.as_str()) == Some("weather")));
        let Some(Message::User { text }) = requests[1].messages.last() else {
            panic!("the second request ends with what was wrong");
        };
        assert!(text.contains("/celsius"), "{text}");
    }

    #[tokio::test]
    async fn without_retries_an_answer_off_the_schema_fails_the_run() {
        let model = ScriptedModel::new().then(ModelResponse::answer("It is 18 degrees."));
        let agent = Agent::builder(model).build();
        let options = RunOptions::default().output(weather()).output_retries(0);
        let error = agent.run("Weather in Lyon?", &options).await.unwrap_err();
        assert!(
            matches!(&error.failure, RunFailure::Output(told) if told.contains("holds none")),
            "{error:?}"
        );
        assert_eq!(error.partial.text, "It is 18 degrees.");
        assert!(error.partial.output.is_none());
    }

    #[tokio::test]
    async fn an_empty_answer_is_asked_again_and_left_out_of_the_transcript() {
        let model = Arc::new(
            ScriptedModel::new()
                .then(ModelResponse::answer(""))
                .then(ModelResponse::answer(r#"{"city": "Lyon", "celsius": 18}"#)),
        );
        let agent = Agent::builder(Arc::clone(&model)).build();
        let options = RunOptions::default().output(weather());
        let result = agent.run("Weather in Lyon?", &options).await.unwrap();
        assert!(result.output.is_some());
        let second = &model.requests()[1].messages;
        assert_eq!(second.len(), 2, "{second:?}");
        assert!(matches!(&second[0], Message::User { .. }));
        assert!(matches!(&second[1], Message::User { text } if text.contains("holds none")));
    }

    #[tokio::test]
    async fn without_a_step_left_a_refused_answer_fails_the_run() {
        let model = ScriptedModel::new().then(ModelResponse::answer("It is 18 degrees."));
        let agent = Agent::builder(model).build();
        let mut options = RunOptions::default().output(weather());
        options.max_steps = 1;
        options.answer_at_limit = false;
        let error = agent.run("Weather in Lyon?", &options).await.unwrap_err();
        assert!(matches!(error.failure, RunFailure::Output(_)), "{error:?}");
    }

    #[tokio::test]
    async fn the_nulls_of_a_strict_answer_are_left_out_of_the_output() {
        let format = ResponseFormat::new(
            "weather",
            json!({
                "type": "object",
                "properties": { "city": { "type": "string" }, "wind": { "type": "integer" } },
                "required": ["city"]
            }),
        );
        let model =
            ScriptedModel::new().then(ModelResponse::answer(r#"{"city": "Lyon", "wind": null}"#));
        let agent = Agent::builder(model).build();
        let options = RunOptions::default().output(format);
        let result = agent.run("Weather in Lyon?", &options).await.unwrap();
        assert_eq!(result.output, Some(json!({ "city": "Lyon" })));
    }

    #[tokio::test]
    async fn a_run_without_an_output_schema_has_no_output() {
        let model = ScriptedModel::new().then(ModelResponse::answer(r#"{"city": "Lyon"}"#));
        let agent = Agent::builder(model).build();
        let result = agent
            .run("Weather in Lyon?", &RunOptions::default())
            .await
            .unwrap();
        assert!(result.output.is_none());
        assert!(result.output_as::<serde_json::Value>().is_err());
    }
}
