//! What a route found: the winning tool with its parameters, or no match; every candidate's
//! score either way, and the tokens spent.

use serde::Serialize;
use serde_json::{Map, Value};
use tool_core::{ToolError, ToolOutput};

use tool_model::message::Usage;

/// The outcome of [`Router::route`](crate::Router::route).
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// A tool was chosen, with the arguments for its handler.
    Tool(Routed),
    /// No tool scored at or above the threshold with valid parameters, and no fallback could
    /// take the query.
    NoMatch(NoMatch),
}

impl Route {
    /// The chosen tool, if any.
    pub fn routed(&self) -> Option<&Routed> {
        match self {
            Route::Tool(routed) => Some(routed),
            Route::NoMatch(_) => None,
        }
    }

    /// Every candidate, in file order, with its score.
    pub fn candidates(&self) -> &[CandidateScore] {
        match self {
            Route::Tool(routed) => &routed.candidates,
            Route::NoMatch(none) => &none.candidates,
        }
    }

    /// The tokens the route's model requests used.
    pub fn usage(&self) -> Usage {
        match self {
            Route::Tool(routed) => routed.usage,
            Route::NoMatch(none) => none.usage,
        }
    }
}

/// The chosen tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Routed {
    /// The declared tool's name.
    pub tool: String,
    /// The type it was declared under.
    pub schema_type: String,
    /// The executor tool that runs it.
    pub handler: String,
    /// Its score (100 for a lone candidate that was not scored).
    pub score: u8,
    /// The arguments for the handler: the extracted parameters the handler's schema knows,
    /// validated against it when the router has an executor.
    pub params: Map<String, Value>,
    /// Whether it is the fallback tool, chosen because nothing reached the threshold.
    pub fallback: bool,
    /// Every candidate, in file order.
    pub candidates: Vec<CandidateScore>,
    /// The tokens the route used.
    pub usage: Usage,
}

/// No tool for the query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoMatch {
    /// Every candidate, in file order.
    pub candidates: Vec<CandidateScore>,
    /// The tokens the route used.
    pub usage: Usage,
}

/// One candidate's evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateScore {
    /// The declared tool's name.
    pub tool: String,
    /// The type it was declared under.
    #[serde(rename = "type")]
    pub schema_type: String,
    /// Its score, 0..=100 (0 when the evaluation failed or did not happen).
    pub score: u8,
    /// The parameters the model extracted.
    pub params: Map<String, Value>,
    /// What went wrong: a failed or unreadable evaluation, or parameters that stayed invalid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the score came from.
    pub source: ScoreSource,
    /// Whether the model answered its evaluation: `false` when it was not asked, failed or
    /// ran out of time (a model that cannot be reached answers none; a score of 0 from it is
    /// not "does not fit").
    pub answered: bool,
}

/// Where a candidate's score came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreSource {
    /// The model scored it now.
    Model,
    /// The evaluation cache had it.
    Cache,
    /// It was the only candidate of the query's type: not scored (100). One the prefilter
    /// left alone is scored.
    LoneCandidate,
    /// Not evaluated: another tool reached the early-stop mark first.
    EarlyStop,
    /// Not evaluated: the retrieval prefilter left it out.
    Prefiltered,
}

impl ScoreSource {
    /// Whether a candidate of this source was sent to the model (a lone candidate, only
    /// when its parameters were asked for).
    pub fn asks_the_model(self) -> bool {
        matches!(self, ScoreSource::Model | ScoreSource::LoneCandidate)
    }
}

/// What [`Router::run`](crate::Router::run) did.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    /// The route.
    pub routed: Routed,
    /// The handler's output.
    pub output: ToolOutput,
}

/// Why [`Router::run`](crate::Router::run) has no output.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RouterRunError {
    /// No tool for the query.
    #[error("no declared tool fits the query ({} candidate(s) scored)", .0.candidates.len())]
    NoMatch(Box<NoMatch>),
    /// The router was built without an executor: it can route, not run.
    #[error("the router has no executor: build it with `.executor(..)` to run tools")]
    NoExecutor,
    /// The handler failed (its error, panic, time limit...).
    #[error("tool `{}` (handler `{}`) failed: {error}", .routed.tool, .routed.handler)]
    Tool {
        /// The route that chose it.
        routed: Box<Routed>,
        /// The executor's error.
        error: ToolError,
    },
}
