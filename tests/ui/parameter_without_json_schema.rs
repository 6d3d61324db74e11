use ai_tool::prelude::*;

#[derive(serde::Deserialize)]
struct Point {
    x: i32,
}

/// Moves to a point.
#[ai_tool]
fn move_to(point: Point) -> i32 {
    point.x
}

fn main() {}
