//! Argument types of the tools under test, and valid arguments for them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Category {
    Room,
    Bike,
    Plane,
}

// The argument type: a nullable but required property, length limits on strings and
// on a list, and an enum. A plain comment, not a doc comment: the schema has no description
// for the type, as before it moved here.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ComplexInput {
    /// A nullable but required property.
    pub nullable_but_required: Option<String>,
    #[schemars(length(max = 10))]
    pub max_length_10: String,
    #[schemars(length(min = 5))]
    pub min_length_5: String,
    pub kind: Category,
    #[schemars(length(min = 2, max = 5))]
    pub categories: Vec<Category>,
}

/// A valid `ComplexInput`, as JSON.
pub fn complex_ok() -> Value {
    json!({
        "nullable_but_required": null,
        "max_length_10": "short",
        "min_length_5": "long enough",
        "kind": "Bike",
        "categories": ["Room", "Plane"]
    })
}
