use ai_tool::prelude::*;

pub struct Point {
    x: i32,
}

/// Takes its parameters in forms a tool cannot.
#[ai_tool]
fn forms(Point { x }: Point, list: &mut Vec<u32>, ctx: ToolContext) -> i32 {
    let _ = (list, ctx);
    x
}

/// Takes the context twice.
#[ai_tool]
fn twice(a: &ToolContext, b: &ToolContext) -> u32 {
    let _ = (a, b);
    1
}

fn main() {}
