use ai_tool::prelude::*;

#[ai_tool]
fn undocumented(a: i32) -> i32 {
    a
}

fn main() {}
