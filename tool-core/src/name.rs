//! Tool name rules: the one table of them ([`PORTABLE`], [`MODEL_API`], [`WIDE`], [`LABEL`]).
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
    #[error("tool name `{}` is {len} characters long; at most {max} are allowed", shown(.name))]
    TooLong {
        /// The refused name.
        name: String,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name has a character outside the alphabet.
    #[error("tool name `{}` has `{ch}` at position {pos}; allowed are {allowed}", shown(.name))]
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

/// One rule for tool names: an alphabet (which may depend on the position) and a length.
///
/// The rules are the constants of this module; every place that checks or makes a name uses
/// them: the `#[ai_tool]` macro ([`PORTABLE`], through a copy tested against this table),
/// catalogs and dynamic tools ([`WIDE`], [`LABEL`]), and each provider API (`Format::accepts_name`).
#[derive(Debug, Clone, Copy)]
pub struct NameRule {
    /// The most characters a name may have.
    pub max_chars: usize,
    allowed: fn(usize, char) -> bool,
    words: &'static str,
}

/// The rule every provider accepts, and the macro's: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
pub const PORTABLE: NameRule = NameRule {
    max_chars: 64,
    allowed: portable_char,
    words: "ASCII letters and `_` first, then letters, digits, `_` and `-`",
};

/// The rule of OpenAI, Anthropic and Bedrock: `^[a-zA-Z0-9_-]{1,64}$` (a digit or `-` may come
/// first).
pub const MODEL_API: NameRule = NameRule {
    max_chars: 64,
    allowed: model_api_char,
    words: "ASCII letters, digits, `_` and `-`",
};

/// MCP's rule, for catalogs and dynamic tools: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub const WIDE: NameRule = NameRule {
    max_chars: 128,
    allowed: wide_char,
    words: "ASCII letters, digits, `_`, `-` and `.`",
};

/// Names as labels only, never declared to a model (as in an evaluation set): 1 to 128
/// characters, none of them white space or a control character.
pub const LABEL: NameRule = NameRule {
    max_chars: 128,
    allowed: label_char,
    words: "any character but white space and control characters",
};

fn portable_char(pos: usize, c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || (pos > 0 && (c.is_ascii_digit() || c == '-'))
}

fn model_api_char(_: usize, c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn wide_char(_: usize, c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn label_char(_: usize, c: char) -> bool {
    !c.is_whitespace() && !c.is_control()
}

impl NameRule {
    /// Checks a name against the rule, saying what is wrong.
    pub fn check(&self, name: &str) -> Result<(), NameError> {
        if name.is_empty() {
            return Err(NameError::Empty);
        }
        if let Some((pos, ch)) = name
            .chars()
            .enumerate()
            .find(|&(pos, c)| !(self.allowed)(pos, c))
        {
            return Err(NameError::BadChar {
                name: name.to_owned(),
                ch,
                pos,
                allowed: self.words,
            });
        }
        let len = name.chars().count();
        if len > self.max_chars {
            return Err(NameError::TooLong {
                name: name.to_owned(),
                len,
                max: self.max_chars,
            });
        }
        Ok(())
    }

    /// Whether the rule accepts a name.
    pub fn accepts(&self, name: &str) -> bool {
        self.check(name).is_ok()
    }
}

/// How many characters of a name a message shows; the rest is counted.
const SHOWN_CHARS: usize = 64;

/// A name as a message shows it: whole when it is at most 64 characters (every name a rule
/// accepts is at most 128), otherwise its first 64 characters and a count of the rest, so that a
/// megabyte-long name in a call or a catalog never makes a megabyte-long error.
///
/// ```
/// assert_eq!(tool_core::name::shown("get_weather"), "get_weather");
/// let long = "a".repeat(1_000);
/// assert_eq!(tool_core::name::shown(&long), format!("{}... (936 more characters)", "a".repeat(64)));
/// ```
pub fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    match name.char_indices().nth(SHOWN_CHARS) {
        None => name.into(),
        Some((end, _)) => {
            let rest = name[end..].chars().count();
            format!("{}... ({rest} more characters)", &name[..end]).into()
        }
    }
}

/// Checks a name against the rule every provider accepts: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
///
/// ```
/// assert!(tool_core::name::check_portable("get_weather").is_ok());
/// assert!(tool_core::name::check_portable("9lives").is_err());
/// assert!(tool_core::name::check_portable("files.read").is_err());
/// ```
pub fn check_portable(name: &str) -> Result<(), NameError> {
    PORTABLE.check(name)
}

/// Checks a name against MCP's rule for catalogs and dynamic tools: 1 to 128 of
/// `A-Z a-z 0-9 _ - .`.
pub fn check_wide(name: &str) -> Result<(), NameError> {
    WIDE.check(name)
}

/// A name [`PORTABLE`] accepts, made from one it may not: every character outside
/// `A-Z a-z 0-9 _ -` becomes `_`, a `_` goes before a first character that is not a letter or
/// `_`, and a name over 64 characters is cut to 55 and ends in a hash of the whole name, which
/// keeps long names apart.
///
/// ```
/// assert_eq!(tool_core::name::to_portable("github.repos.list"), "github_repos_list");
/// assert_eq!(tool_core::name::to_portable("9lives"), "_9lives");
/// ```
pub fn to_portable(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    if out.len() > PORTABLE.max_chars {
        out = format!("{}_{:08x}", truncate(&out, 55), fnv1a(name));
    }
    out
}

/// The first `max` bytes of an ASCII name.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    &s[..s.len().min(max)]
}

fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
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

    #[test]
    fn model_apis_take_a_leading_digit_but_no_dot() {
        assert!(MODEL_API.accepts("9lives"));
        assert!(MODEL_API.accepts("-x"));
        assert!(!MODEL_API.accepts("a.b"));
        assert!(!MODEL_API.accepts(&"x".repeat(65)));
        assert!(!MODEL_API.accepts(""));
    }

    #[test]
    fn labels_take_anything_but_spaces_and_controls() {
        assert!(LABEL.accepts("PDF&URLTool"));
        assert!(!LABEL.accepts("a b"));
        assert!(!LABEL.accepts("a\tb"));
        assert!(!LABEL.accepts(&"x".repeat(129)));
    }

    #[test]
    fn to_portable_makes_names_the_portable_rule_accepts() {
        for name in ["a.b", "9", "-", "files/read", &"x.".repeat(100)] {
            let made = to_portable(name);
            assert!(PORTABLE.accepts(&made), "{name} -> {made}");
        }
        assert_eq!(to_portable("ok_name"), "ok_name");
    }
}
