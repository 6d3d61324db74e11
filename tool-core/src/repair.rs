//! Mending a model's tool-call arguments that are not valid JSON, for a small set of slips
//! models make: a Markdown code fence around the JSON, trailing commas, single-quoted strings,
//! and JSON cut short (an unclosed string, unclosed brackets). Nothing else is guessed: text
//! that still does not parse stays unrepaired, and the call goes back to the model with the
//! JSON error.
//!
//! Written here rather than taken from a crate: JSON5 parsers (`json5`) read single quotes and
//! trailing commas but refuse text cut short, the commonest slip of a streamed call, and
//! report nothing of what they changed, which the loop must report.

use serde_json::Value;

/// One kind of mend [`repair_json`] made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonFix {
    /// A Markdown code fence (```` ```json ````) around the JSON was taken off.
    CodeFence,
    /// A comma before a closing bracket, or at the end, was left out.
    TrailingComma,
    /// A string in single quotes was put in double quotes.
    SingleQuotes,
    /// A string open at the end was closed.
    UnclosedString,
    /// Brackets open at the end were closed.
    UnclosedBrackets,
}

impl std::fmt::Display for JsonFix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JsonFix::CodeFence => "a code fence taken off",
            JsonFix::TrailingComma => "a trailing comma left out",
            JsonFix::SingleQuotes => "single quotes made double",
            JsonFix::UnclosedString => "an unclosed string closed",
            JsonFix::UnclosedBrackets => "unclosed brackets closed",
        })
    }
}

/// `text` read as JSON after the mends of this module, with the mends made (each kind once,
/// in the order first made); `None` when it is valid JSON already (nothing to mend) or still
/// is not after them.
///
/// ```
/// use serde_json::json;
/// use tool_core::repair::{repair_json, JsonFix};
///
/// let (value, fixes) = repair_json("{'city': 'Paris', 'days': [1, 2,],").unwrap();
/// assert_eq!(value, json!({ "city": "Paris", "days": [1, 2] }));
/// assert_eq!(
///     fixes,
///     [JsonFix::SingleQuotes, JsonFix::TrailingComma, JsonFix::UnclosedBrackets]
/// );
/// ```
pub fn repair_json(text: &str) -> Option<(Value, Vec<JsonFix>)> {
    if serde_json::from_str::<Value>(text).is_ok() {
        return None;
    }
    let mut fixes = Vec::new();
    let body = match unfenced(text) {
        Some(inner) => {
            fixes.push(JsonFix::CodeFence);
            inner
        }
        None => text,
    };
    let mended = mend(body, &mut fixes)?;
    let value = serde_json::from_str::<Value>(&mended).ok()?;
    Some((value, fixes))
}

/// The text inside a Markdown code fence, when the whole text is one.
fn unfenced(text: &str) -> Option<&str> {
    let trimmed = text.trim();
    let rest = trimmed.strip_prefix("```")?;
    // The fence's info string (`json`) runs to the end of its line.
    let (_, inner) = rest.split_once('\n')?;
    Some(inner.trim_end().strip_suffix("```").unwrap_or(inner))
}

/// `text` with trailing commas left out, single-quoted strings double-quoted, and an open
/// string and open brackets closed at the end; `None` when a bracket closes one of another
/// kind.
fn mend(text: &str, fixes: &mut Vec<JsonFix>) -> Option<String> {
    let mut note = |fix: JsonFix| {
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    };
    let mut out = String::with_capacity(text.len() + 8);
    let mut open: Vec<char> = Vec::new();
    let chars = text.char_indices();
    // The quote of the string being read, and whether the last character was a backslash.
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in chars {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
                // `\'` in a single-quoted string is a plain quote in JSON.
                if q == '\'' && c == '\'' {
                    out.pop();
                }
                out.push(c);
            } else if c == '\\' {
                escaped = true;
                out.push(c);
            } else if c == q {
                quote = None;
                out.push('"');
            } else if c == '"' {
                // A double quote inside single quotes.
                out.push_str("\\\"");
            } else {
                out.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                quote = Some('"');
                out.push('"');
            }
            '\'' => {
                note(JsonFix::SingleQuotes);
                quote = Some('\'');
                out.push('"');
            }
            '{' => {
                open.push('}');
                out.push(c);
            }
            '[' => {
                open.push(']');
                out.push(c);
            }
            '}' | ']' => {
                if open.pop() != Some(c) {
                    return None;
                }
                out.push(c);
            }
            ',' => {
                let next = text[at + 1..].trim_start().chars().next();
                if matches!(next, None | Some('}' | ']')) {
                    note(JsonFix::TrailingComma);
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    if quote.is_some() {
        if escaped {
            out.pop();
        }
        note(JsonFix::UnclosedString);
        out.push('"');
    }
    if !open.is_empty() {
        // A comma left at the end before the brackets close.
        let trimmed = out.trim_end();
        if trimmed.ends_with(',') {
            let end = trimmed.len() - 1;
            out.truncate(end);
            note(JsonFix::TrailingComma);
        }
        note(JsonFix::UnclosedBrackets);
        while let Some(close) = open.pop() {
            out.push(close);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixed(text: &str) -> (Value, Vec<JsonFix>) {
        repair_json(text).unwrap_or_else(|| panic!("not repaired: {text}"))
    }

    #[test]
    fn valid_json_needs_no_repair_and_nonsense_gets_none() {
        assert_eq!(repair_json(r#"{"a": 1}"#), None);
        assert_eq!(repair_json("not json at all"), None);
        assert_eq!(
            repair_json(r#"{"a": [1}"#),
            None,
            "a bracket of another kind"
        );
        assert_eq!(
            repair_json(r#"{"a": "#),
            None,
            "a value missing is not guessed"
        );
    }

    #[test]
    fn each_slip_is_mended_and_named() {
        assert_eq!(
            fixed(r#"{"a": 1, "b": [1, 2,],}"#),
            (json!({ "a": 1, "b": [1, 2] }), vec![JsonFix::TrailingComma])
        );
        assert_eq!(
            fixed(r#"{'say': 'it\'s "fine"'}"#),
            (
                json!({ "say": "it's \"fine\"" }),
                vec![JsonFix::SingleQuotes]
            )
        );
        assert_eq!(
            fixed(r#"{"city": "Par"#),
            (
                json!({ "city": "Par" }),
                vec![JsonFix::UnclosedString, JsonFix::UnclosedBrackets]
            )
        );
        assert_eq!(
            fixed("```json\n{\"a\": [1, {\"b\": 2}]}\n```"),
            (json!({ "a": [1, { "b": 2 }] }), vec![JsonFix::CodeFence])
        );
        assert_eq!(
            fixed(r#"{"a": [1, 2,"#),
            (
                json!({ "a": [1, 2] }),
                vec![JsonFix::TrailingComma, JsonFix::UnclosedBrackets]
            )
        );
    }

    #[test]
    fn commas_and_quotes_inside_strings_are_text() {
        assert_eq!(
            fixed(r#"{"list": "a, b,]", "q": "it's",}"#),
            (
                json!({ "list": "a, b,]", "q": "it's" }),
                vec![JsonFix::TrailingComma]
            )
        );
        assert_eq!(
            fixed(r#"{"path": "C:\\dir\""#),
            (
                json!({ "path": "C:\\dir\"" }),
                vec![JsonFix::UnclosedString, JsonFix::UnclosedBrackets]
            )
        );
    }
}
