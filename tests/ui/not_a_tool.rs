use ai_tool::prelude::*;

struct GetWeather;

fn main() {
    let _ = Executor::builder().tool(GetWeather).build();
    // Metadata describes the tool just added, and nothing else.
    let _ = Executor::builder().registered_tools(false).title("Weather Getter");
}
