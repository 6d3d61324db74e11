use ai_tool::prelude::*;

static NUMBER: u32 = 1;

/// Returns a reference.
#[ai_tool]
fn borrowed() -> &'static u32 {
    &NUMBER
}

/// Returns `impl Trait`.
#[ai_tool]
fn opaque() -> impl std::fmt::Display {
    1
}

/// Returns a reference inside a `Result`.
#[ai_tool]
fn in_result() -> Result<&'static u32, String> {
    Ok(&NUMBER)
}

fn main() {}
