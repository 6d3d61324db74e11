use ai_tool::prelude::*;

#[derive(Debug)]
enum LookupError {
    Missing,
}

struct Directory;

#[ai_tools]
impl Directory {
    /// Looks a name up.
    #[ai_tool]
    fn lookup(&self, name: String) -> Result<u32, LookupError> {
        if name.is_empty() {
            Err(LookupError::Missing)
        } else {
            Ok(1)
        }
    }
}

fn main() {}
