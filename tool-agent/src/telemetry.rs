//! The run's spans and metric events, named by OpenTelemetry's GenAI semantic conventions, in
//! `tracing`: whoever subscribes decides where they go. `ai_tool::otel` (feature `otel`) sends
//! them over OTLP, the spans through `tracing-opentelemetry` and the metric events into the
//! conventions' histograms.
//!
//! A span's name for OpenTelemetry is its `otel.name` field (`chat gpt-4o`,
//! `execute_tool search`); its `tracing` name stays fixed (`gen_ai.chat`, ...), as `tracing`
//! needs.

use std::time::Duration;

use tool_core::provider::Format;
use tool_core::{ToolCall, ToolError, ToolOutput};
use tool_model::{ChatModel, ModelError, Usage};
use tracing::field::Empty;
use tracing::Span;

/// The target of the metric events, for a subscriber to pick them out (or filter them away).
pub const METRICS_TARGET: &str = "gen_ai.metrics";

/// The conventions' `gen_ai.provider.name` for a model's API, `None` when it has no format
/// (a scripted or a user's own model).
pub(crate) fn provider_name(format: Option<Format>) -> Option<&'static str> {
    Some(match format? {
        Format::OpenAiChat | Format::OpenAiResponses => "openai",
        Format::Anthropic => "anthropic",
        Format::Gemini => "gcp.gemini",
        Format::Bedrock => "aws.bedrock",
        _ => return None,
    })
}

/// The span of one request to the model.
pub(crate) fn chat_span(model: &dyn ChatModel) -> Span {
    let name = model.model_name();
    tracing::info_span!(
        "gen_ai.chat",
        otel.name = %ChatName(name),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider_name(model.format()),
        gen_ai.request.model = name,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.r#type = Empty,
    )
}

/// `chat {model}`, or `chat` for a model without a name; written only if a subscriber
/// records the span.
struct ChatName<'a>(&'a str);

impl std::fmt::Display for ChatName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            "" => f.write_str("chat"),
            name => write!(f, "chat {name}"),
        }
    }
}

/// Records how a request ended on its span, and the conventions' metrics of it: the
/// operation's duration, and the tokens used, by type.
pub(crate) fn chat_ended(
    span: &Span,
    model: &dyn ChatModel,
    elapsed: Duration,
    outcome: Result<&Usage, &ModelError>,
) {
    let provider = provider_name(model.format());
    let name = model.model_name();
    let seconds = elapsed.as_secs_f64();
    match outcome {
        Ok(usage) => {
            span.record("gen_ai.usage.input_tokens", usage.input_tokens);
            span.record("gen_ai.usage.output_tokens", usage.output_tokens);
            tracing::event!(
                target: METRICS_TARGET,
                tracing::Level::INFO,
                histogram.gen_ai.client.operation.duration = seconds,
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = provider,
                gen_ai.request.model = name,
                "chat duration"
            );
            for (kind, tokens) in [
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
            ] {
                tracing::event!(
                    target: METRICS_TARGET,
                    tracing::Level::INFO,
                    histogram.gen_ai.client.token.usage = tokens,
                    gen_ai.operation.name = "chat",
                    gen_ai.provider.name = provider,
                    gen_ai.request.model = name,
                    gen_ai.token.r#type = kind,
                    "chat token usage"
                );
            }
        }
        Err(error) => {
            let kind = model_error_type(error);
            span.record("error.type", kind.as_str());
            span.record("otel.status_code", "ERROR");
            tracing::event!(
                target: METRICS_TARGET,
                tracing::Level::INFO,
                histogram.gen_ai.client.operation.duration = seconds,
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = provider,
                gen_ai.request.model = name,
                error.r#type = kind.as_str(),
                "chat duration"
            );
        }
    }
}

/// A model error's `error.type`: the HTTP status the provider answered with, or a short,
/// fixed name.
fn model_error_type(error: &ModelError) -> String {
    match error {
        ModelError::Status { status, .. } => status.to_string(),
        ModelError::Transport { .. } => "transport".into(),
        ModelError::Malformed { .. } => "malformed".into(),
        ModelError::Setup(_) => "setup".into(),
        _ => "_OTHER".into(),
    }
}

/// The span of one tool call, its arguments on it when `content` is on.
pub(crate) fn tool_span(call: &ToolCall, content: bool) -> Span {
    let name = &call.name;
    let span = tracing::info_span!(
        "gen_ai.execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %name,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = call.id.as_deref().unwrap_or_default(),
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.r#type = Empty,
    );
    if content {
        span.record("gen_ai.tool.call.arguments", call.arguments.to_string());
    }
    span
}

/// Records how a call ended on its span: `error.type` for a failure (the error's kind, or
/// `tool_error` for an error result), and the result's text when `content` is on.
pub(crate) fn tool_ended(span: &Span, result: &Result<ToolOutput, ToolError>, content: bool) {
    let failed = match result {
        Ok(output) if output.is_error => Some("tool_error".to_owned()),
        Ok(_) => None,
        Err(error) => Some(format!("{:?}", error.kind())),
    };
    if let Some(kind) = failed {
        span.record("error.type", kind);
        span.record("otel.status_code", "ERROR");
    }
    if content {
        let text = match result {
            Ok(output) => output.to_text(),
            Err(error) => error.to_model_text(),
        };
        span.record("gen_ai.tool.call.result", text);
    }
}
