use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Why a tool call did not produce output.
///
/// `Display` is for the developer. [`ToolError::to_model_text`] is for the model: short, and
/// saying what to change so that the next call succeeds.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool has this name.
    #[error("unknown tool `{name}`{}", did_you_mean(suggestions))]
    UnknownTool {
        /// The name that was called.
        name: String,
        /// Up to three close names.
        suggestions: Vec<String>,
    },
    /// The arguments do not match the tool's schema.
    #[error("invalid arguments for `{tool}`: {}", join(violations, "; "))]
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
    /// [`ToolError::InvalidArguments`].
    InvalidArguments,
    /// [`ToolError::ArgumentsTooLarge`].
    ArgumentsTooLarge,
    /// [`ToolError::Failed`].
    Failed,
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
            | ToolError::InvalidArguments { tool, .. }
            | ToolError::ArgumentsTooLarge { tool, .. }
            | ToolError::Failed { tool, .. }
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
            ToolError::InvalidArguments { .. } => ToolErrorKind::InvalidArguments,
            ToolError::ArgumentsTooLarge { .. } => ToolErrorKind::ArgumentsTooLarge,
            ToolError::Failed { .. } => ToolErrorKind::Failed,
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
    pub fn to_model_text(&self) -> String {
        match self {
            ToolError::UnknownTool { name, suggestions } if suggestions.is_empty() => {
                format!("There is no tool named `{name}`. Use one of the tools you were given.")
            }
            ToolError::UnknownTool { name, suggestions } => format!(
                "There is no tool named `{name}`. Did you mean {}?",
                suggestions
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            ToolError::InvalidArguments { tool, violations } => format!(
                "Invalid arguments for `{tool}`:\n{}\nFix these and call `{tool}` again.",
                violations
                    .iter()
                    .map(|v| format!("- {v}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            ToolError::ArgumentsTooLarge { tool, limit, .. } => format!(
                "The arguments for `{tool}` are too large (limit {limit} bytes). Send less data."
            ),
            ToolError::Failed { tool, message, .. } => format!("`{tool}` failed: {message}"),
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

fn join(violations: &[Violation], separator: &str) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(separator)
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
    }
}
