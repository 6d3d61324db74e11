use ai_tool::ai_tool;

/// Reads a day.
#[ai_tool(grammar = json)]
fn day(text: String) -> String {
    text
}

/// Two texts.
#[ai_tool(grammar = regex(r"\d+"))]
fn two(a: String, b: String) -> String {
    a + &b
}

/// A number is not text.
#[ai_tool(grammar = free)]
fn number(n: u32) -> u32 {
    n
}

/// The text is always given.
#[ai_tool(grammar = lark("start: WORD"))]
fn defaulted(#[arg(default = "x")] text: String) -> String {
    text
}

fn main() {}
