use ai_tool::prelude::*;

struct Service;

pub trait Describe {
    fn describe(&self) -> String;
}

#[ai_tools]
impl Describe for Service {
    fn describe(&self) -> String {
        "a service".into()
    }
}

#[ai_tools]
impl Service {
    /// `crate` belongs on the impl.
    #[ai_tool(crate = ai_tool)]
    fn get(&self) -> u32 {
        1
    }

    /// An attribute written as a value.
    #[ai_tool = "list"]
    fn list(&self) -> u32 {
        1
    }

    #[ai_tool(description = "  ")]
    fn blank(&self) -> u32 {
        1
    }
}

#[ai_tools]
fn not_an_impl() {}

#[ai_tool]
struct NotAFunction;

fn main() {}
