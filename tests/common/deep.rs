//! Deeply nested values, built and checked without the recursion that would overflow a stack.

use serde_json::{json, Map, Value};

/// `depth` arrays nested in one another, built without recursion.
pub fn nested_arrays(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 1..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{key: value}`, built without `json!`, which would serialize a deep value recursively.
pub fn object(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.into(), value);
    Value::Object(map)
}

/// Runs `f` on a thread with the 2 MiB stack that test and tokio worker threads have.
pub fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("no stack overflow");
}
