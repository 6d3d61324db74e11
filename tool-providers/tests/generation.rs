//! Every client writes the generation settings (`Generation`) in its API's own fields, a
//! request's settings winning over the client's one by one, and leaves out what its API lacks.

use serde_json::{json, Value};
use tool_agent::{Generation, Message, ModelRequest};
use tool_providers::{
    AnthropicModel, BedrockModel, GeminiModel, OpenAiChatModel, OpenAiResponsesModel,
};

fn request(generation: Generation) -> ModelRequest {
    let mut request = ModelRequest::new(vec![Message::user("Hello")]);
    request.generation = generation;
    request
}

fn every_setting() -> Generation {
    Generation::new()
        .max_tokens(256)
        .temperature(0.5)
        .top_p(0.9)
        .stop(["END"])
        .seed(7)
}

fn fields(body: &Value, names: &[&str]) -> Value {
    let object = body.as_object().expect("a body is an object");
    let mut out = serde_json::Map::new();
    for name in names {
        if let Some(value) = object.get(*name) {
            out.insert((*name).to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

#[test]
fn openai_chat_writes_every_setting() {
    let model = OpenAiChatModel::new("m").with_generation(every_setting());
    let body: Value = serde_json::from_slice(&model.body(&request(Generation::new())).unwrap())
        .expect("the body is JSON");
    assert_eq!(
        fields(
            &body,
            &[
                "max_completion_tokens",
                "temperature",
                "top_p",
                "stop",
                "seed"
            ]
        ),
        json!({ "max_completion_tokens": 256, "temperature": 0.5, "top_p": 0.9, "stop": ["END"], "seed": 7 })
    );
    // A body field of the same name replaces the setting, and is written once.
    let model = model.with_body_field("max_completion_tokens", json!(9));
    let bytes = model.body(&request(Generation::new())).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert_eq!(text.matches("max_completion_tokens").count(), 1, "{text}");
    assert!(text.contains("\"max_completion_tokens\":9"), "{text}");
}

#[test]
fn openai_responses_writes_length_and_sampling_and_leaves_out_stop_and_seed() {
    let model = OpenAiResponsesModel::new("m").with_generation(every_setting());
    let body = model.body(&request(Generation::new()));
    assert_eq!(
        fields(
            &body,
            &["max_output_tokens", "temperature", "top_p", "stop", "seed"]
        ),
        json!({ "max_output_tokens": 256, "temperature": 0.5, "top_p": 0.9 })
    );
}

#[test]
fn anthropic_writes_length_and_stop_sequences_only() {
    let body = AnthropicModel::new("m")
        .with_generation(every_setting())
        .body(&request(Generation::new()));
    assert_eq!(
        fields(
            &body,
            &[
                "max_tokens",
                "stop_sequences",
                "temperature",
                "top_p",
                "seed"
            ]
        ),
        json!({ "max_tokens": 256, "stop_sequences": ["END"] })
    );
    // The API requires max_tokens: without one set, its default.
    let body = AnthropicModel::new("m").body(&request(Generation::new()));
    assert_eq!(body["max_tokens"], AnthropicModel::DEFAULT_MAX_TOKENS);
}

#[test]
fn gemini_writes_every_setting_in_the_generation_config() {
    let body = GeminiModel::new("m")
        .with_api_key(tool_providers::ApiKey::new("k"))
        .with_generation(every_setting())
        .body(&request(Generation::new()));
    assert_eq!(
        body["generationConfig"],
        json!({ "maxOutputTokens": 256, "temperature": 0.5, "topP": 0.9, "stopSequences": ["END"], "seed": 7 })
    );
}

#[test]
fn bedrock_writes_the_inference_config_without_a_seed() {
    let body = BedrockModel::new("m")
        .with_region("us-east-1")
        .with_generation(every_setting())
        .body(&request(Generation::new()));
    assert_eq!(
        body["inferenceConfig"],
        json!({ "maxTokens": 256, "temperature": 0.5, "topP": 0.9, "stopSequences": ["END"] })
    );
}

#[test]
fn a_requests_settings_win_over_the_clients_one_by_one() {
    let model = GeminiModel::new("m").with_generation(every_setting());
    let body = model.body(&request(Generation::new().temperature(0.0).stop(["STOP"])));
    assert_eq!(
        body["generationConfig"],
        json!({ "maxOutputTokens": 256, "temperature": 0.0, "topP": 0.9, "stopSequences": ["STOP"], "seed": 7 })
    );
    // The shortcuts set the client's.
    let body = OpenAiResponsesModel::new("m")
        .with_max_tokens(10)
        .with_temperature(1.0)
        .body(&request(Generation::new().max_tokens(20)));
    assert_eq!(
        fields(&body, &["max_output_tokens", "temperature"]),
        json!({ "max_output_tokens": 20, "temperature": 1.0 })
    );
}

#[test]
fn a_temperature_that_is_not_a_number_is_not_sent() {
    let body = OpenAiResponsesModel::new("m")
        .with_generation(Generation::new().temperature(f32::NAN).top_p(f32::INFINITY))
        .body(&request(Generation::new()));
    assert_eq!(fields(&body, &["temperature", "top_p"]), json!({}));
}

#[test]
fn debug_shows_the_shared_settings_and_no_key() {
    let model = OpenAiChatModel::new("m")
        .with_api_key(tool_providers::ApiKey::new("sk-secret"))
        .with_header("x-gateway-key", "gw-secret")
        .with_body_field("reasoning_effort", json!("low"))
        .with_max_tokens(5);
    let shown = format!("{model:?}");
    assert!(shown.starts_with("OpenAiChatModel {"), "{shown}");
    for hidden in ["sk-secret", "gw-secret"] {
        assert!(!shown.contains(hidden), "{shown}");
    }
    for seen in ["x-gateway-key", "reasoning_effort", "max_tokens: Some(5)"] {
        assert!(shown.contains(seen), "{shown}");
    }
}
