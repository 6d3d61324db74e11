//! A hand-written tool: Orchard Core's `get_weather` seed (an `AIFunction` registered with
//! `AddAITool<GetWeatherFunction>("get_weather").WithTitle("Weather Getter")..`), written with
//! the `Tool` trait and registered fluently, and a closure registered the same way.
//!
//! Run with `cargo run --example hand_written`.

use std::fmt;

use ai_tool::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

// What `get_weather` takes; a doc comment here would become the schema's `description`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// The geographic location for which the weather information is requested.
    pub location: String,
}

/// A small forecast.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forecast {
    pub location: String,
    pub sky: String,
    pub high_celsius: i32,
}

/// The tool's failure: the model reads its text.
#[derive(Debug)]
pub struct UnknownLocation(pub String);

impl fmt::Display for UnknownLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no forecast for `{}`; try a city name", self.0)
    }
}

impl std::error::Error for UnknownLocation {}

/// Today's forecast for a location (a stand-in for a weather service).
pub fn forecast(location: &str) -> Result<Forecast, UnknownLocation> {
    let (sky, high_celsius) = match location.to_lowercase().as_str() {
        "lyon" => ("sunny", 24),
        "oslo" => ("rain", 11),
        "paris" => ("cloudy", 19),
        _ => return Err(UnknownLocation(location.to_owned())),
    };
    Ok(Forecast {
        location: location.to_owned(),
        sky: sky.to_owned(),
        high_celsius,
    })
}

/// Orchard Core's `GetWeatherFunction`, as a Rust type.
pub struct GetWeather;

impl GetWeather {
    pub fn new() -> Self {
        GetWeather
    }
}

impl Default for GetWeather {
    fn default() -> Self {
        GetWeather::new()
    }
}

impl Tool for GetWeather {
    type Args = WeatherArgs; // the schema is derived from it
    type Output = Result<Json<Forecast>, UnknownLocation>;

    fn name(&self) -> &str {
        "get_weather"
    }

    fn description(&self) -> &str {
        "Retrieves weather information for a specified location."
    }

    async fn call(&self, args: WeatherArgs, _ctx: &ToolContext<'_>) -> Self::Output {
        forecast(&args.location).map(Json)
    }
}

/// Adds the weather tool with the metadata Orchard Core's seed gives it.
pub fn with_weather(builder: ExecutorBuilder) -> ExecutorBuilder {
    builder.tool_with(GetWeather::new(), |tool| {
        tool.title("Weather Getter")
            .category("Service")
            .purpose("document_processing")
            .selectable()
            .keywords(["weather", "forecast"])
            .examples(["Will it rain in Lyon today?"])
            .read_only()
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schema = json!({
        "type": "object",
        "properties": { "zone": { "type": "string" } },
        "required": ["zone"]
    });
    let clock = DynamicTool::new("clock", "Tells the time", schema, |args, _ctx| async move {
        Ok(ToolOutput::text(format!("12:00 in {}", args["zone"])))
    });

    let exec = with_weather(Executor::builder())
        .tool_with(clock, |tool| tool.title("Clock").read_only()) // a closure takes the same metadata
        .build()?;

    let declared = exec.declarations(Format::OpenAiChat, &DeclareOptions::default());
    println!("{}", serde_json::to_string_pretty(&declared.tools[0])?);
    let spec = exec.spec("get_weather").ok_or("get_weather is missing")?;
    println!("metadata: {}", serde_json::to_string(&spec.metadata)?);

    let out = exec
        .execute("get_weather", json!({ "location": "Lyon" }))
        .await?;
    println!("get_weather: {}", out.to_text());
    let err = exec
        .execute("get_weather", json!({ "city": "Lyon" }))
        .await
        .unwrap_err();
    println!("a bad call:\n{}", err.to_model_text());
    let err = exec
        .execute("get_weather", json!({ "location": "Atlantis" }))
        .await
        .unwrap_err();
    println!("a failed call: {}", err.to_model_text());
    Ok(())
}
