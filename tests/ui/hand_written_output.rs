use ai_tool::prelude::*;

#[derive(serde::Serialize)]
struct Forecast {
    sky: String,
}

struct GetWeather;

impl Tool for GetWeather {
    type Args = serde_json::Value;
    type Output = Forecast;

    fn name(&self) -> &str {
        "get_weather"
    }

    fn description(&self) -> &str {
        "Gets the weather."
    }

    async fn call(&self, _args: serde_json::Value, _ctx: &ToolContext<'_>) -> Forecast {
        Forecast { sky: "clear".into() }
    }
}

fn main() {
    let _ = Executor::builder().tool(GetWeather).build();
}
