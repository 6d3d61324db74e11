//! Checks on a parsed tool, before any code is generated. Every problem is reported, each at
//! the tokens it is about.

use crate::ast::{Receiver, Role, ToolFn};
use crate::ctxt::Ctxt;
use syn::LitStr;

/// What the checks settle: the tool's final name, description and time limit.
pub(crate) struct Checked {
    pub name: String,
    pub description: String,
    pub timeout_ms: Option<u64>,
}

/// `impl_prefix` is `Some` for a method of an `#[ai_tools]` impl, with the impl's `prefix`.
pub(crate) fn check(tool: &ToolFn, impl_prefix: Option<Option<&LitStr>>, cx: &mut Ctxt) -> Checked {
    let in_impl = impl_prefix.is_some();
    let prefix = impl_prefix.flatten();
    if let Receiver::Other(receiver) = &tool.receiver {
        cx.error(
            receiver,
            "a tool method must take `&self`; keep mutable state behind a `Mutex` or an atomic inside the service",
        );
    }
    if !tool.generics.params.is_empty() {
        cx.error(
            &tool.generics,
            "a tool cannot be generic: its schema and its call need concrete types; write the tool for one type (it may call a generic function), or one tool per type",
        );
    }
    if !in_impl && matches!(tool.receiver, Receiver::Ref) {
        cx.push(syn::Error::new(
            tool.sig_span,
            "`#[ai_tool]` on a method needs `#[ai_tools]` on its impl block",
        ));
    }
    let prefixed = |name: String| match prefix {
        Some(prefix) => format!("{}_{name}", prefix.value()),
        None => name,
    };
    let name = match &tool.attr.name {
        Some(lit) => {
            let name = prefixed(lit.value());
            if let Err(message) = check_name(&name) {
                cx.error(lit, message);
            }
            name
        }
        None => {
            let name = prefixed(tool.ident.to_string().trim_start_matches("r#").to_owned());
            if let Err(message) = check_name(&name) {
                let hint = match prefix {
                    Some(_) => {
                        "shorten the impl's `prefix`, or set a shorter name with `name = \"..\"`"
                    }
                    None => "set another with `name = \"..\"`",
                };
                cx.error(&tool.ident, format!("{message}; {hint}"));
            }
            name
        }
    };
    let description = match (&tool.attr.description, &tool.docs) {
        (Some(lit), _) if lit.value().trim().is_empty() => {
            cx.error(
                lit,
                "the description is empty; say what the tool does, for the model",
            );
            String::new()
        }
        (Some(lit), _) => lit.value(),
        (None, Some(docs)) => docs.clone(),
        (None, None) => {
            cx.push(syn::Error::new(
                tool.sig_span,
                "a tool needs a description for the model: add a doc comment (`/// ...`) or `description = \"...\"`",
            ));
            String::new()
        }
    };
    if tool.attr.convert.len() > 1 {
        cx.error(
            &tool.attr.convert[1],
            "a tool has one converter; remove one `convert = ..`",
        );
    }
    let flattened: Vec<_> = tool
        .params
        .iter()
        .filter(|p| p.role == Role::Flatten)
        .collect();
    let properties = tool
        .params
        .iter()
        .filter(|p| p.role == Role::Property)
        .count();
    if let Some(first) = flattened.first() {
        if flattened.len() > 1 || properties > 0 {
            cx.error(&first.ident, "`#[arg(flatten)]` makes this parameter the whole argument object, so it must be the only argument (besides `&ToolContext`)");
        }
        if first.arg.default.is_some() || first.arg.description.is_some() {
            cx.error(&first.ident, "a flattened argument takes no `default` or `description`; put them on the fields of its struct");
        }
    }
    if tool
        .params
        .iter()
        .filter(|p| p.role == Role::Context)
        .count()
        > 1
    {
        cx.push(syn::Error::new(tool.sig_span, "take `&ToolContext` once"));
    }
    let timeout_ms =
        tool.attr
            .timeout
            .as_ref()
            .and_then(|lit| match parse_duration_ms(&lit.value()) {
                Ok(ms) => Some(ms),
                Err(message) => {
                    cx.error(lit, message);
                    None
                }
            });
    Checked {
        name,
        description,
        timeout_ms,
    }
}

/// The name rule every provider accepts: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`. A copy of
/// `tool_core::name::PORTABLE`, held to it by the tests in `name_rule.rs`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !first_ok || !rest_ok || name.len() > 64 {
        return Err(format!(
            "tool name `{name}` is not accepted by every provider: use 1 to 64 of ASCII letters, digits, `_` and `-`, starting with a letter or `_`"
        ));
    }
    Ok(())
}

/// A prefix for the tools of an impl: the start of a name `prefix_name` under the same rule.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), String> {
    if check_name(prefix).is_err() || prefix.len() > 62 {
        return Err(format!(
            "prefix `{prefix}` cannot start a tool name every provider accepts: the tools are named `{prefix}_<name>`, so use 1 to 62 of ASCII letters, digits, `_` and `-`, starting with a letter or `_`"
        ));
    }
    Ok(())
}

/// `"500ms"`, `"5s"`, `"2m"`, `"1h"`.
fn parse_duration_ms(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("`{text}` is not a duration; write a whole number and a unit, such as \"500ms\", \"5s\", \"2m\" or \"1h\"")),
    };
    match number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(ms) if ms > 0 => Ok(ms),
        _ => Err(format!(
            "`{text}` is not a positive duration, such as \"5s\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("5s"), Ok(5_000));
        assert_eq!(parse_duration_ms("2m"), Ok(120_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        assert!(parse_duration_ms("5").is_err());
        assert!(parse_duration_ms("0s").is_err());
        assert!(parse_duration_ms("1.5s").is_err());
    }

    #[test]
    fn names_follow_the_portable_rule() {
        assert!(check_name("get_weather-2").is_ok());
        assert!(check_name("2fast").is_err());
        assert!(check_name("files.read").is_err());
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn prefixes_leave_room_for_a_name() {
        assert!(check_prefix("users").is_ok());
        assert!(check_prefix("users.v2").is_err());
        assert!(check_prefix(&"a".repeat(63)).is_err());
    }
}
