//! [`ToolChoice::Allowed`]: the words of the APIs that have it, and the declarations narrowed
//! for those that do not (Anthropic, Bedrock).

use serde_json::{json, Value};
use tool_core::provider::Aliases;
use tool_model::{AllowedMode, ToolChoice};

/// OpenAI's `allowed_tools` mode.
pub(crate) fn mode(mode: AllowedMode) -> Value {
    match mode {
        AllowedMode::Auto => json!("auto"),
        AllowedMode::Required => json!("required"),
    }
}

/// The declarations, narrowed to the allowed tools when the choice is
/// [`ToolChoice::Allowed`]; `name_at` points to a declaration's name. Entries without a name
/// (Bedrock's cache points) stay.
pub(crate) fn only_named(
    declarations: &Value,
    choice: &ToolChoice,
    aliases: &Aliases,
    name_at: &str,
) -> Value {
    let (ToolChoice::Allowed(names, _), Value::Array(tools)) = (choice, declarations) else {
        return declarations.clone();
    };
    let allowed: Vec<&str> = names.iter().map(|n| aliases.provider_name(n)).collect();
    let kept = tools
        .iter()
        .filter(|tool| match tool.pointer(name_at).and_then(Value::as_str) {
            Some(name) => allowed.contains(&name),
            None => true,
        })
        .cloned()
        .collect();
    Value::Array(kept)
}
