use ai_tool::prelude::*;

struct Counter(u32);

#[ai_tools]
impl Counter {
    /// Counts.
    #[ai_tool]
    fn bump(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
}

fn main() {}
