use ai_tool::prelude::*;

/// Reads a file.
#[ai_tool(name = "files.read")]
fn read(path: String) -> String {
    path
}

/// Too long a name.
#[ai_tool(name = "a_name_that_is_much_too_long_for_the_providers_to_accept_as_a_tool_name")]
fn long(path: String) -> String {
    path
}

#[ai_tool_converter("9lives")]
fn convert(v: String) -> ToolOutput {
    ToolOutput::text(v)
}

fn main() {}
