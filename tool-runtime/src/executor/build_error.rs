//! Why `build()` failed: every problem found, each naming the tool and where it was defined.

use tool_core::{CatalogError, ToolSource, ToolSpec};

/// Everything wrong with a build, each problem on its own line.
///
/// `Debug` prints the same lines as `Display`, so that `main` returning this error with `?`
/// (directly or through `anyhow`/`Box<dyn Error>`) prints them readably.
#[derive(thiserror::Error)]
#[error("cannot build the executor:\n{}", .problems.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n"))]
pub struct BuildError {
    /// The problems found, all of them.
    pub problems: Vec<BuildProblem>,
}

impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// One reason an executor cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildProblem {
    /// Two tools have one name.
    #[error("two tools are named `{name}`: one in {first}, one in {second}; rename one")]
    DuplicateTool {
        /// The name.
        name: String,
        /// Where the first is defined.
        first: ToolSource,
        /// Where the second is defined.
        second: ToolSource,
    },
    /// A tool's name is not allowed.
    #[error("{problem} ({defined_in})")]
    BadName {
        /// Where the tool is defined.
        defined_in: ToolSource,
        /// Why the name is refused.
        #[source]
        problem: tool_core::name::NameError,
    },
    /// A dynamic tool's output schema cannot be used.
    #[error("tool `{name}` ({defined_in}) has an unusable output schema: {problem}")]
    BadOutputSchema {
        /// The tool.
        name: String,
        /// Where it is defined.
        defined_in: ToolSource,
        /// What is wrong.
        #[source]
        problem: tool_core::schema::SchemaError,
    },
    /// A tool's schema cannot be used.
    #[error("tool `{name}` ({defined_in}) has an unusable schema: {problem}")]
    BadSchema {
        /// The tool.
        name: String,
        /// Where it is defined.
        defined_in: ToolSource,
        /// What is wrong.
        #[source]
        problem: tool_core::schema::SchemaError,
    },
    /// A tool breaks the rule every tool follows (an arguments schema whose root is not an
    /// object, an empty description).
    #[error("tool `{name}` ({defined_in}): {problem}")]
    BadSpec {
        /// The tool.
        name: String,
        /// Where it is defined.
        defined_in: ToolSource,
        /// What is wrong.
        #[source]
        problem: tool_core::SpecError,
    },
    /// A tool's service was not provided and `require_all_services()` was asked for.
    #[error("tool `{name}` ({defined_in}) needs the service `{service}`; provide it with `.service(Arc::new(..))`")]
    MissingService {
        /// The tool.
        name: String,
        /// Where it is defined.
        defined_in: ToolSource,
        /// The service type.
        service: &'static str,
    },
    /// Two converters are defined for one tool.
    #[error("tool `{name}` has two converters: one in {first}, one in {second}; keep one")]
    ConverterConflict {
        /// The tool.
        name: String,
        /// Where the first is defined.
        first: String,
        /// Where the second is defined.
        second: String,
    },
    /// A converter takes another type than the tool returns.
    #[error("the converter in {converter} takes `{expected}`, but tool `{name}` ({defined_in}) returns `{found}`")]
    ConverterTypeMismatch {
        /// The tool.
        name: String,
        /// Where the tool is defined.
        defined_in: ToolSource,
        /// Where the converter is defined.
        converter: String,
        /// What the converter takes.
        expected: &'static str,
        /// What the tool returns.
        found: &'static str,
    },
    /// A converter names a tool that does not exist.
    #[error("the converter in {converter} is for `{name}`, but no `#[ai_tool]` has that name")]
    ConverterForUnknownTool {
        /// The name it gives.
        name: String,
        /// Where it is defined.
        converter: String,
    },
    /// A catalog file could not be read.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

/// Where a tool from a spec was defined; a spec that does not say was made at run time.
pub(super) fn source_of(spec: &ToolSpec) -> ToolSource {
    spec.metadata.source.clone().unwrap_or(ToolSource::Dynamic)
}
