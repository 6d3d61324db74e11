use ai_tool::prelude::*;

/// Takes borrowed values below the top level, which its arguments cannot lend.
#[ai_tool]
fn nested(names: &[&str], nickname: Option<&str>) -> usize {
    names.len() + nickname.map_or(0, str::len)
}

/// Borrows for `'static`.
#[ai_tool]
fn forever(text: &'static str) -> usize {
    text.len()
}

/// Takes `impl Trait`.
#[ai_tool]
fn any_text(text: impl Into<String>) -> usize {
    text.into().len()
}

/// Gates a parameter.
#[ai_tool]
fn gated(#[cfg(any())] extra: u32, base: u32) -> u32 {
    base
}

#[doc = include_str!("borrowed_parameters.rs")]
#[ai_tool]
fn included() -> u32 {
    1
}

/// A borrowed type through `macro_rules!`, as generated code passes it.
macro_rules! tool_taking {
    ($name:ident, $ty:ty) => {
        /// Takes what the macro was given.
        #[ai_tool]
        fn $name(value: $ty) -> usize {
            value.map_or(0, str::len)
        }
    };
}

tool_taking!(through_a_macro, Option<&str>);

fn main() {}
