use ai_tool::prelude::*;

struct Store<T>(T);

#[ai_tools]
impl<T: Send + Sync + 'static> Store<T> {
    /// Counts.
    #[ai_tool]
    fn count(&self) -> u32 {
        1
    }
}

fn main() {}
