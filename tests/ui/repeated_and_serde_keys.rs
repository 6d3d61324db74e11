use ai_tool::prelude::*;

/// Names itself twice.
#[ai_tool(name = "first", name = "second")]
fn named() -> u32 {
    1
}

/// Describes a parameter twice, over two attributes.
#[ai_tool]
fn described(
    #[arg(description = "one")]
    #[arg(description = "two")]
    x: u32,
) -> u32 {
    x
}

/// Writes `default` as serde does, without a value.
#[ai_tool]
fn paged(#[arg(default)] page: u32) -> u32 {
    page
}

/// Writes the converter's path in quotes, as serde writes its paths.
#[ai_tool(convert = "to_text")]
fn quoted() -> u32 {
    1
}

fn to_text(value: u32) -> ToolOutput {
    ToolOutput::text(value.to_string())
}

pub struct Users;

#[ai_tools(prefix = "users", prefix = "people")]
impl Users {
    /// Lists the users.
    #[ai_tool]
    fn list(&self) -> u32 {
        0
    }
}

fn main() {}
