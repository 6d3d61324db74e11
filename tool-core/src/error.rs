use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::words::thousands;

/// A tool's error as a [`std::error::Error`], shared: the source of a [`ToolError::Failed`].
///
/// It derefs to the error itself, and is not an `Error` of its own, so that
/// [`source()`](std::error::Error::source) gives the tool's error (which `downcast_ref` finds)
/// rather than a wrapper around it.
#[derive(Clone)]
pub struct FailureSource(Arc<dyn std::error::Error + Send + Sync>);

impl FailureSource {
    /// The error, shared.
    pub fn new(error: Arc<dyn std::error::Error + Send + Sync>) -> Self {
        FailureSource(error)
    }
}

impl std::ops::Deref for FailureSource {
    type Target = dyn std::error::Error + Send + Sync;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for FailureSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// Why a tool call did not produce output.
///
/// `Display` is for the developer. [`ToolError::to_model_text`] is for the model: short, and
/// saying what to change so that the next call succeeds.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool has this name.
    #[error("unknown tool `{}`{}", crate::name::shown(.name), did_you_mean(suggestions))]
    UnknownTool {
        /// The name that was called.
        name: String,
        /// Up to three close names.
        suggestions: Vec<String>,
    },
    /// The tool exists, but was not offered to the model in this request, so the call is refused.
    /// The model reads it as it reads [`ToolError::UnknownTool`]: a name it was not given, with the
    /// close names among those it was given.
    #[error(
        "tool `{name}` was not offered in this request{}",
        did_you_mean(suggestions)
    )]
    NotOffered {
        /// The name that was called.
        name: String,
        /// Up to three close names among the tools that were offered.
        suggestions: Vec<String>,
    },
    /// The arguments do not match the tool's schema.
    #[error(
        "invalid arguments for `{tool}`: {}",
        listed(violations, "; ", ModelTextLimits::default())
    )]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Every violation found, in document order.
        violations: Vec<Violation>,
    },
    /// The arguments are larger than the executor accepts.
    #[error("arguments for `{tool}` are {size} bytes; the limit is {limit} bytes")]
    ArgumentsTooLarge {
        /// The tool.
        tool: String,
        /// The size of the arguments (at least this many bytes).
        size: usize,
        /// The executor's limit.
        limit: usize,
    },
    /// The tool ran and reported an error.
    #[error("tool `{tool}` failed: {message}")]
    Failed {
        /// The tool.
        tool: String,
        /// The error's `Display` text.
        message: String,
        /// The typed error the tool returned; see [`ToolError::downcast_ref`].
        error: Option<Arc<dyn Any + Send + Sync>>,
        /// The same error, when its type is a [`std::error::Error`]: what
        /// [`source()`](std::error::Error::source) gives, so that error reporters show its chain.
        #[source]
        source: Option<FailureSource>,
    },
    /// The tool refused these arguments for a reason its schema cannot say (a date in the
    /// past, an unknown customer) and asks to be called again with better ones
    /// ([`ToolError::retry`]). The model reads the reason and is told to call again; the agent
    /// loop counts it with invalid arguments against the tool's retry budget.
    #[error("tool `{tool}` asks for other arguments: {message}")]
    Retry {
        /// The tool.
        tool: String,
        /// What to change, for the model.
        message: String,
    },
    /// The tool panicked. The executor goes on serving.
    #[error("tool `{tool}` panicked: {message}")]
    Panicked {
        /// The tool.
        tool: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool ran past its time limit and was stopped.
    #[error("tool `{tool}` timed out after {after:?}")]
    TimedOut {
        /// The tool.
        tool: String,
        /// The limit that was reached.
        after: Duration,
    },
    /// The call was cancelled through its context's cancellation token.
    #[error("tool `{tool}` was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The tool is declared (for example in a catalog) but has no implementation here.
    #[error("tool `{tool}` is declared but has no implementation in this executor")]
    NotExecutable {
        /// The tool.
        tool: String,
    },
    /// The tool cannot run in this process as it is set up (for example: it has a time limit,
    /// and the tokio runtime polling the call has no time driver). A problem of the program,
    /// not of the call: the message says what to change.
    #[error("tool `{tool}` cannot run here: {message}")]
    Misconfigured {
        /// The tool.
        tool: String,
        /// What is missing, and how to provide it.
        message: String,
    },
}

/// What kind of [`ToolError`] an error is, without its data: comparable, hashable and `Copy`,
/// for matching in tests, metrics and retry policies.
///
/// ```
/// # use tool_core::{ToolError, ToolErrorKind};
/// let err = ToolError::Cancelled { tool: "search".into() };
/// assert_eq!(err.kind(), ToolErrorKind::Cancelled);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// [`ToolError::UnknownTool`].
    UnknownTool,
    /// [`ToolError::NotOffered`].
    NotOffered,
    /// [`ToolError::InvalidArguments`].
    InvalidArguments,
    /// [`ToolError::ArgumentsTooLarge`].
    ArgumentsTooLarge,
    /// [`ToolError::Failed`].
    Failed,
    /// [`ToolError::Retry`].
    Retry,
    /// [`ToolError::Panicked`].
    Panicked,
    /// [`ToolError::TimedOut`].
    TimedOut,
    /// [`ToolError::Cancelled`].
    Cancelled,
    /// [`ToolError::NotExecutable`].
    NotExecutable,
    /// [`ToolError::Misconfigured`].
    Misconfigured,
}

/// One way in which arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// JSON pointer to the offending value in the arguments (`""` is the whole object).
    pub pointer: String,
    /// What is wrong, with the expected type or bound.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}

impl ToolError {
    /// The name of the tool the error is about.
    pub fn tool_name(&self) -> &str {
        match self {
            ToolError::UnknownTool { name: tool, .. }
            | ToolError::NotOffered { name: tool, .. }
            | ToolError::InvalidArguments { tool, .. }
            | ToolError::ArgumentsTooLarge { tool, .. }
            | ToolError::Failed { tool, .. }
            | ToolError::Retry { tool, .. }
            | ToolError::Panicked { tool, .. }
            | ToolError::TimedOut { tool, .. }
            | ToolError::Cancelled { tool }
            | ToolError::NotExecutable { tool }
            | ToolError::Misconfigured { tool, .. } => tool,
        }
    }

    /// The error's kind, comparable with `==`.
    pub fn kind(&self) -> ToolErrorKind {
        match self {
            ToolError::UnknownTool { .. } => ToolErrorKind::UnknownTool,
            ToolError::NotOffered { .. } => ToolErrorKind::NotOffered,
            ToolError::InvalidArguments { .. } => ToolErrorKind::InvalidArguments,
            ToolError::ArgumentsTooLarge { .. } => ToolErrorKind::ArgumentsTooLarge,
            ToolError::Failed { .. } => ToolErrorKind::Failed,
            ToolError::Retry { .. } => ToolErrorKind::Retry,
            ToolError::Panicked { .. } => ToolErrorKind::Panicked,
            ToolError::TimedOut { .. } => ToolErrorKind::TimedOut,
            ToolError::Cancelled { .. } => ToolErrorKind::Cancelled,
            ToolError::NotExecutable { .. } => ToolErrorKind::NotExecutable,
            ToolError::Misconfigured { .. } => ToolErrorKind::Misconfigured,
        }
    }

    /// A failure carrying the tool's typed error.
    pub fn failed<E>(tool: impl Into<String>, error: E) -> Self
    where
        E: fmt::Display + Send + Sync + 'static,
    {
        ToolError::Failed {
            tool: tool.into(),
            message: error.to_string(),
            error: Some(Arc::new(error)),
            source: None,
        }
    }

    /// A tool's request to be called again with better arguments ([`ToolError::Retry`]):
    /// return it from a tool, an `#[ai_tool]` function's `Err` included.
    ///
    /// ```
    /// # use tool_core::{ToolError, ToolErrorKind};
    /// let err = ToolError::retry("book", "the date 2020-01-01 is in the past");
    /// assert_eq!(err.kind(), ToolErrorKind::Retry);
    /// assert!(err.to_model_text().ends_with("Fix this and call `book` again."));
    /// ```
    pub fn retry(tool: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::Retry {
            tool: tool.into(),
            message: message.into(),
        }
    }

    /// A failure carrying the tool's typed error, which is also its
    /// [`source()`](std::error::Error::source). `#[ai_tool]` makes this of an error type that is
    /// a [`std::error::Error`], and [`ToolError::failed`] of one that is only `Display`.
    ///
    /// ```
    /// # use std::error::Error;
    /// # use tool_core::ToolError;
    /// let err = ToolError::failed_with_source("parse", "x".parse::<i32>().unwrap_err());
    /// let source = err.source().expect("the tool's error");
    /// assert!(source.downcast_ref::<std::num::ParseIntError>().is_some());
    /// ```
    pub fn failed_with_source<E>(tool: impl Into<String>, error: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let error = Arc::new(error);
        ToolError::Failed {
            tool: tool.into(),
            message: error.to_string(),
            error: Some(Arc::clone(&error) as Arc<dyn Any + Send + Sync>),
            source: Some(FailureSource(error)),
        }
    }

    /// The typed error a tool returned, if it was an `E`.
    ///
    /// ```
    /// # use tool_core::ToolError;
    /// let err = ToolError::failed("parse", std::num::ParseIntError::clone(&"x".parse::<i32>().unwrap_err()));
    /// assert!(err.downcast_ref::<std::num::ParseIntError>().is_some());
    /// ```
    pub fn downcast_ref<E: 'static>(&self) -> Option<&E> {
        match self {
            ToolError::Failed {
                error: Some(error), ..
            } => error.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// The error as text for the model: what went wrong and what to do about it.
    ///
    /// However many violations there are, the text stays short: it lists the first 20 and
    /// counts the rest, within about 4 KB (see [`ModelTextLimits`]).
    pub fn to_model_text(&self) -> String {
        self.to_model_text_within(ModelTextLimits::default())
    }

    /// [`ToolError::to_model_text`] with other limits on the listed violations.
    ///
    /// ```
    /// # use tool_core::{ModelTextLimits, ToolError, Violation};
    /// let violations = (0..5)
    ///     .map(|i| Violation { pointer: format!("/{i}"), message: "is wrong".into() })
    ///     .collect();
    /// let err = ToolError::InvalidArguments { tool: "t".into(), violations };
    /// let text = err.to_model_text_within(ModelTextLimits { violations: 2, ..Default::default() });
    /// assert!(text.contains("- /1: is wrong\n- and 3 more\n"), "{text}");
    /// ```
    pub fn to_model_text_within(&self, limits: ModelTextLimits) -> String {
        match self {
            ToolError::UnknownTool { name, suggestions }
            | ToolError::NotOffered { name, suggestions }
                if suggestions.is_empty() =>
            {
                format!(
                    "There is no tool named `{}`. Use one of the tools you were given.",
                    crate::name::shown(name)
                )
            }
            ToolError::UnknownTool { name, suggestions }
            | ToolError::NotOffered { name, suggestions } => format!(
                "There is no tool named `{}`. Did you mean {}?",
                crate::name::shown(name),
                suggestions
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            ToolError::InvalidArguments { tool, violations } => format!(
                "Invalid arguments for `{tool}`:\n- {}\nFix these and call `{tool}` again.",
                listed(violations, "\n- ", limits)
            ),
            ToolError::ArgumentsTooLarge { tool, limit, .. } => format!(
                "The arguments for `{tool}` are too large (limit {limit} bytes). Send less data."
            ),
            ToolError::Failed { tool, message, .. } => format!("`{tool}` failed: {message}"),
            ToolError::Retry { tool, message } => format!(
                "`{tool}` did not run with these arguments: {message}\nFix this and call `{tool}` again."
            ),
            ToolError::Panicked { tool, .. } => {
                format!("`{tool}` failed with an internal error. Do not retry the same call.")
            }
            ToolError::TimedOut { tool, after } => {
                format!("`{tool}` did not finish within {after:?}. Try a smaller request.")
            }
            ToolError::Cancelled { tool } => format!("The call to `{tool}` was cancelled."),
            ToolError::NotExecutable { tool } => {
                format!("`{tool}` cannot be run here. Use another tool.")
            }
            ToolError::Misconfigured { tool, .. } => {
                format!("`{tool}` cannot run because of a problem on the server side. Use another tool.")
            }
        }
    }
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

/// How much of a list of violations the error texts show.
///
/// Arguments can be wrong in as many places as they have values: the texts list the first
/// `violations` and count the rest ("and 99,980 more"), and stop listing sooner when the list
/// would pass `bytes`. A single message is cut at a quarter of `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelTextLimits {
    /// How many violations are listed; 20 by default.
    pub violations: usize,
    /// The most bytes the listed violations take; 4,000 by default.
    pub bytes: usize,
}

impl Default for ModelTextLimits {
    fn default() -> Self {
        ModelTextLimits {
            violations: 20,
            bytes: 4_000,
        }
    }
}

/// The violations joined by `separator`, within `limits`, the rest counted.
fn listed(violations: &[Violation], separator: &str, limits: ModelTextLimits) -> String {
    let mut text = String::new();
    let mut shown = 0;
    for violation in violations.iter().take(limits.violations) {
        let whole = violation.to_string();
        let line = cut(&whole, limits.bytes / 4);
        let joined = if shown == 0 { 0 } else { separator.len() };
        // The first violation is always shown, however long.
        if shown > 0 && text.len() + joined + line.len() > limits.bytes {
            break;
        }
        if shown > 0 {
            text.push_str(separator);
        }
        text.push_str(&line);
        shown += 1;
    }
    if shown < violations.len() {
        if shown > 0 {
            text.push_str(separator);
        }
        text.push_str(&format!("and {} more", thousands(violations.len() - shown)));
    }
    text
}

/// `text` cut to about `max` bytes, on a character boundary, saying how much was left out.
fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let rest = text[end..].chars().count();
    format!("{}... ({} more characters)", &text[..end], thousands(rest)).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_arguments_text_lists_every_pointer() {
        let err = ToolError::InvalidArguments {
            tool: "check".into(),
            violations: vec![
                Violation {
                    pointer: "/input/a".into(),
                    message: "\"xx\" is too long".into(),
                },
                Violation {
                    pointer: "".into(),
                    message: "\"b\" is a required property".into(),
                },
            ],
        };
        let text = err.to_model_text();
        assert!(text.contains("- /input/a: \"xx\" is too long"), "{text}");
        assert!(text.contains("- /: \"b\" is a required property"), "{text}");
        assert!(err.to_string().starts_with("invalid arguments for `check`"));
    }

    fn many(n: usize, message: &str) -> ToolError {
        ToolError::InvalidArguments {
            tool: "t".into(),
            violations: (0..n)
                .map(|i| Violation {
                    pointer: format!("/values/{i}"),
                    message: message.into(),
                })
                .collect(),
        }
    }

    #[test]
    fn lists_twenty_violations_then_counts_the_rest() {
        let err = many(100_000, "300 is greater than the maximum of 255");
        let text = err.to_model_text();
        assert_eq!(text.matches("\n- /values/").count(), 20, "{text}");
        assert!(text.contains("\n- and 99,980 more\nFix these"), "{text}");
        assert!(text.len() < 2_000, "{} bytes", text.len());
        let display = err.to_string();
        assert!(display.ends_with("; and 99,980 more"), "{display}");
        assert!(display.len() < 2_000, "{} bytes", display.len());
    }

    #[test]
    fn long_violations_are_cut_and_the_list_stays_within_its_bytes() {
        let err = many(20, &"x".repeat(5_000));
        let text = err.to_model_text();
        assert!(text.len() < 4_200, "{} bytes", text.len());
        assert!(text.contains("more characters)"), "{text}");
        assert!(text.contains("- and 17 more"), "{text}");
        let one = many(1, "short").to_model_text();
        assert_eq!(
            one,
            "Invalid arguments for `t`:\n- /values/0: short\nFix these and call `t` again."
        );
    }

    #[test]
    fn unknown_tool_text_offers_suggestions() {
        let err = ToolError::UnknownTool {
            name: "ad".into(),
            suggestions: vec!["add".into()],
        };
        assert_eq!(
            err.to_model_text(),
            "There is no tool named `ad`. Did you mean `add`?"
        );
        assert_eq!(err.to_string(), "unknown tool `ad`; did you mean add?");
    }

    #[test]
    fn not_offered_reads_like_an_unknown_tool_to_the_model() {
        let not_offered = ToolError::NotOffered {
            name: "delete_all".into(),
            suggestions: vec!["delete_one".into()],
        };
        let unknown = ToolError::UnknownTool {
            name: "delete_all".into(),
            suggestions: vec!["delete_one".into()],
        };
        assert_eq!(not_offered.to_model_text(), unknown.to_model_text());
        assert_eq!(not_offered.kind(), ToolErrorKind::NotOffered);
        assert_eq!(not_offered.tool_name(), "delete_all");
        assert_eq!(
            not_offered.to_string(),
            "tool `delete_all` was not offered in this request; did you mean delete_one?"
        );
    }

    #[test]
    fn failed_keeps_the_typed_error() {
        #[derive(Debug, PartialEq)]
        struct Oops(u8);
        impl fmt::Display for Oops {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "oops {}", self.0)
            }
        }
        let err = ToolError::failed("t", Oops(7));
        assert_eq!(err.downcast_ref::<Oops>(), Some(&Oops(7)));
        assert_eq!(err.to_model_text(), "`t` failed: oops 7");
        assert!(err.downcast_ref::<String>().is_none());
        assert!(std::error::Error::source(&err).is_none());
    }

    #[test]
    fn failed_with_source_keeps_the_error_as_its_source() {
        let parse = "x".parse::<i32>().unwrap_err();
        let err = ToolError::failed_with_source("t", parse.clone());
        let source = std::error::Error::source(&err).expect("a source");
        assert_eq!(source.to_string(), parse.to_string());
        assert_eq!(source.downcast_ref(), Some(&parse));
        assert_eq!(err.downcast_ref(), Some(&parse));
        assert_eq!(err.to_model_text(), format!("`t` failed: {parse}"));
    }
}
