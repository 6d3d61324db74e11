//! The seam for the fuzz target `router_answer` of `fuzz/`: the router's reading of a model's
//! evaluation. Not a stable API; hidden from the documentation.

/// The router's reading of a model's evaluation answer: the score (0 to 100), the parameters,
/// and why the score is 0 when it could not be read.
pub fn read_router_answer(
    text: &str,
) -> (
    u8,
    serde_json::Map<String, serde_json::Value>,
    Option<String>,
) {
    let read = crate::answer::read_answer(text);
    (read.score, read.params, read.problem)
}
