use ai_tool::prelude::*;

struct Service;

#[ai_tools]
impl Service {
    /// Consumes the service.
    #[ai_tool]
    fn consume(self) -> u32 {
        1
    }
}

fn main() {}
