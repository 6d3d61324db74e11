//! An agent run traced with OpenTelemetry: its spans and GenAI metrics sent over OTLP/HTTP to
//! a collector (Jaeger, Grafana, the OpenTelemetry Collector...). The model is scripted, so no
//! key is needed; a real client traces the same way.
//!
//! Run with `cargo run --features otel --example telemetry -- http://127.0.0.1:4318` (without
//! a URL: `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`).

use std::sync::Arc;

use ai_tool::agent::{Agent, ModelResponse, RunOptions, ScriptedModel};
use ai_tool::otel::Telemetry;
use ai_tool::prelude::*;
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// A weather service.
pub struct Weather;

#[ai_tools]
impl Weather {
    /// Today's temperature in a city, in degrees Celsius.
    #[ai_tool(read_only)]
    fn temperature(&self, city: String) -> i32 {
        if city == "Oslo" {
            -3
        } else {
            21
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut export = Telemetry::otlp_http().service_name("weather-agent");
    if let Some(url) = std::env::args().nth(1) {
        export = export.endpoint(url);
    }
    let telemetry = export.build()?;
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    tracing::subscriber::set_global_default(subscriber)?;

    let model = ScriptedModel::new()
        .then(ModelResponse::calling([ToolCall::new(
            "call_1",
            "temperature",
            json!({"city": "Oslo"}),
        )]))
        .then(ModelResponse::answer("It is -3 °C in Oslo."));
    let tools = Executor::builder().service(Arc::new(Weather)).build()?;
    let agent = Agent::builder(model)
        .executor(tools)
        .trace_content(true) // arguments and results on the spans: off by default
        .build();
    let result = agent
        .run("How cold is Oslo?", &RunOptions::default())
        .await?;
    println!("{}", result.text);

    // Sends what is left; an unreachable collector is reported here.
    match telemetry.shutdown() {
        Ok(()) => println!("spans and metrics sent"),
        Err(error) => eprintln!("not sent: {error}"),
    }
    Ok(())
}
