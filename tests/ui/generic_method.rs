use ai_tool::prelude::*;

struct Store;

#[ai_tools]
impl Store {
    /// Stores a value.
    #[ai_tool]
    fn put<T: serde::de::DeserializeOwned + schemars::JsonSchema>(&self, value: T) -> u32 {
        let _ = value;
        1
    }
}

/// Echoes a value.
#[ai_tool]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
