use ai_tool::prelude::*;

struct Service;

impl Service {
    /// Does a thing.
    #[ai_tool]
    fn thing(&self) -> u32 {
        1
    }
}

fn main() {}
