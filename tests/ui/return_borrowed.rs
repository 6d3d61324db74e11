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

/// Returns a borrow inside an `Option`.
#[ai_tool]
fn maybe(text: &str) -> Option<&str> {
    text.split(' ').next()
}

/// Returns a borrow inside a tuple; a `'static` one is fine.
#[ai_tool]
fn pair(text: &str) -> (&'static str, &str) {
    ("first", text)
}

/// Returns `'static` borrows inside a type: owned enough.
#[ai_tool]
fn fixed() -> Vec<&'static str> {
    vec!["a", "b"]
}

fn main() {}
