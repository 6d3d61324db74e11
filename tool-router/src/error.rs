//! Why a tools file could not be read, or a router not built.

use crate::declared::Origin;

/// A tools file that cannot be used: each error names the file, the line when known, and
/// the element or entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsFileError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
    /// The file's extension names no format the reader knows.
    #[error("{file}: unknown tools file format: name the file .xml, .toml or .json")]
    UnknownFormat {
        /// The file.
        file: String,
    },
    /// The text is not well-formed XML, TOML or JSON.
    #[error("{file}:{line}:{column}: malformed {syntax}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// `XML`, `TOML` or `JSON`.
        syntax: &'static str,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The file is larger than a [`ToolsFileLimits`](crate::ToolsFileLimits) cap
    /// allows.
    #[error("{file}: more than {limit} {what}: refused ({setting} sets the limit)")]
    TooLarge {
        /// The file.
        file: String,
        /// What was counted: `bytes` or `XML nodes`.
        what: &'static str,
        /// The cap.
        limit: usize,
        /// The setting that raises it.
        setting: &'static str,
    },
    /// Well-formed, but not a tools file: a tool without a name, a bad `enabled`, a
    /// `returnStruc` that is not a JSON object...
    #[error("{origin}: {message}")]
    Invalid {
        /// Where.
        origin: Origin,
        /// What is wrong, and what to write instead.
        message: String,
    },
}

impl ToolsFileError {
    pub(crate) fn invalid(origin: &Origin, message: impl Into<String>) -> Self {
        ToolsFileError::Invalid {
            origin: origin.clone(),
            message: message.into(),
        }
    }
}

/// A router that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouterBuildError {
    /// An enabled declared tool's handler is not a tool the executor can run.
    #[error(
        "{origin}: the handler `{handler}` of tool `{tool}` is not a tool the executor can run{}",
        did_you_mean(suggestions)
    )]
    MissingHandler {
        /// The declared tool.
        tool: String,
        /// The executor tool it names.
        handler: String,
        /// Where the tool was declared.
        origin: Box<Origin>,
        /// Close names among the executor's tools.
        suggestions: Vec<String>,
    },
    /// An enabled declared tool's handler is marked `requires_approval`, and the router (which
    /// asks nobody before it runs a handler) was not told it may run it.
    #[error(
        "{origin}: the handler `{handler}` of tool `{tool}` requires a person's approval, which \
         the router cannot ask for; build the router with `run_handlers_that_require_approval()` \
         if the query is the approval, or declare another handler"
    )]
    RequiresApproval {
        /// The declared tool.
        tool: String,
        /// The executor tool it names.
        handler: String,
        /// Where the tool was declared.
        origin: Box<Origin>,
    },
    /// A tools file breaks a rule every file follows (a tool without a prompt, a name
    /// declared twice in one type...).
    #[error(transparent)]
    ToolsFile(#[from] ToolsFileError),
    /// The fallback tool is declared nowhere (enabled).
    #[error("the fallback tool `{0}` is not an enabled declared tool")]
    UnknownFallback(String),
    /// A setting is out of range.
    #[error("{0}")]
    Setting(String),
    /// The prefilter's retriever could not be built.
    #[error("the prefilter's retriever: {0}")]
    Prefilter(String),
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        names => format!(
            " (did you mean {}?)",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
