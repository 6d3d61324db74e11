use std::borrow::Cow;

use ai_tool::prelude::*;

/// Is unsafe to call.
#[ai_tool]
unsafe fn risky() -> u32 {
    1
}

/// Describes the context, which the model never sees.
#[ai_tool]
fn described(#[arg(description = "the call")] ctx: &ToolContext) -> u32 {
    let _ = ctx;
    1
}

/// Flattens the context.
#[ai_tool]
fn flat(#[arg(flatten)] ctx: &ToolContext, y: u32) -> u32 {
    let _ = ctx;
    y
}

/// Is marked twice.
#[ai_tool]
#[ai_tool]
fn twice() -> u32 {
    1
}

pub struct Labels;

#[ai_tools]
impl Labels {
    /// Answers text borrowed from the service.
    #[ai_tool]
    fn label(&self) -> Cow<'_, str> {
        Cow::Borrowed("label")
    }

    /// Is marked twice.
    #[ai_tool]
    #[ai_tool(name = "again")]
    fn twice(&self) -> u32 {
        1
    }
}

fn main() {}
