//! Tool name rules.
//!
//! Two alphabets matter. Names written in Rust (`#[ai_tool]`) must be accepted by every provider:
//! `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`. Names from catalogs and remote servers follow MCP's wider
//! rule, 1 to 128 of `A-Z a-z 0-9 _ - .`, because real catalogs use dotted names; those are given
//! aliases where a provider refuses them.

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("a tool name cannot be empty")]
    Empty,
    /// The name is longer than the rule allows.
    #[error("tool name `{name}` is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// The refused name.
        name: String,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name has a character outside the alphabet.
    #[error("tool name `{name}` has `{ch}` at position {pos}; allowed are {allowed}")]
    BadChar {
        /// The refused name.
        name: String,
        /// The first character outside the alphabet.
        ch: char,
        /// Its position (0-based, in characters).
        pos: usize,
        /// The alphabet, in words.
        allowed: &'static str,
    },
}

/// Checks a name against the rule every provider accepts: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
///
/// ```
/// assert!(tool_core::name::check_portable("get_weather").is_ok());
/// assert!(tool_core::name::check_portable("9lives").is_err());
/// assert!(tool_core::name::check_portable("files.read").is_err());
/// ```
pub fn check_portable(name: &str) -> Result<(), NameError> {
    check(
        name,
        64,
        |pos, c| {
            c.is_ascii_alphabetic() || c == '_' || (pos > 0 && (c.is_ascii_digit() || c == '-'))
        },
        "ASCII letters and `_` first, then letters, digits, `_` and `-`",
    )
}

/// Checks a name against MCP's rule for catalogs and dynamic tools: 1 to 128 of
/// `A-Z a-z 0-9 _ - .`.
pub fn check_wide(name: &str) -> Result<(), NameError> {
    check(
        name,
        128,
        |_, c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
        "ASCII letters, digits, `_`, `-` and `.`",
    )
}

fn check(
    name: &str,
    max: usize,
    allowed: impl Fn(usize, char) -> bool,
    words: &'static str,
) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some((pos, ch)) = name.chars().enumerate().find(|&(pos, c)| !allowed(pos, c)) {
        return Err(NameError::BadChar {
            name: name.to_owned(),
            ch,
            pos,
            allowed: words,
        });
    }
    let len = name.chars().count();
    if len > max {
        return Err(NameError::TooLong {
            name: name.to_owned(),
            len,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_accepts_letters_digits_underscore_dash() {
        assert!(check_portable("a").is_ok());
        assert!(check_portable("_private-tool_2").is_ok());
        assert!(check_portable(&"x".repeat(64)).is_ok());
    }

    #[test]
    fn portable_rejects_leading_digit_dot_and_65_chars() {
        assert!(matches!(
            check_portable("1x"),
            Err(NameError::BadChar { pos: 0, .. })
        ));
        assert!(matches!(
            check_portable("-x"),
            Err(NameError::BadChar { pos: 0, .. })
        ));
        assert!(matches!(
            check_portable("a.b"),
            Err(NameError::BadChar { ch: '.', .. })
        ));
        assert!(matches!(
            check_portable(&"x".repeat(65)),
            Err(NameError::TooLong { len: 65, .. })
        ));
        assert_eq!(check_portable(""), Err(NameError::Empty));
    }

    #[test]
    fn wide_accepts_dots_and_128_chars_but_not_slashes() {
        assert!(check_wide("github.repos.list").is_ok());
        assert!(check_wide("9.x").is_ok());
        assert!(check_wide(&"x".repeat(128)).is_ok());
        assert!(check_wide(&"x".repeat(129)).is_err());
        assert!(check_wide("a/b").is_err());
        assert!(check_wide("a b").is_err());
    }
}
