//! Declarative tools and LLM-scored routing (NLWeb's tool selection).
//!
//! Tools are declared in a file ([`ToolsFile`]: NLWeb's `tools.xml`, or the same content
//! as TOML or JSON) under schema.org types. For a query of some type, the router collects the
//! tools of that type and of its ancestors ([`TypeHierarchy`]; a subtype's tool overrides the
//! parent's of the same name), asks the model to score each one's prompt (0..100, plus the
//! parameters its `returnStruc` names) in parallel, with structured output, and picks the best
//! at or above the threshold. Its handler, an executor tool, runs with the parameters.
//!
//! ```no_run
//! use tool_model::ChatModel;
//! use tool_router::{Route, Router, ToolsFile};
//! use tool_runtime::Executor;
//!
//! // `model` is any client: `tool_providers::OpenAiChatModel::new("gpt-4.1-mini")`, say.
//! # async fn demo(exec: Executor, model: impl ChatModel + 'static) -> Result<(), Box<dyn std::error::Error>> {
//! let router = Router::builder(model)
//!     .tools_file(ToolsFile::from_path("tools.xml")?)
//!     .executor(exec)
//!     .fallback("search")
//!     .build()?;
//! match router.route("what goes with lasagna?", "Recipe").await {
//!     Route::Tool(routed) => println!("{} ({}) {:?}", routed.tool, routed.score, routed.params),
//!     Route::NoMatch(_) => println!("no tool"),
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod answer;
mod builder;
mod cache;
mod declared;
mod error;
mod evaluate;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod hierarchy;
mod limits;
mod lines;
mod load;
#[cfg(feature = "retrieval")]
mod prefilter;
mod prompt;
mod route;
mod xml;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_runtime::Executor;
use tracing::Instrument;

use tool_model::structured::ResponseFormat;
use tool_model::ChatModel;

pub use builder::RouterBuilder;
pub use declared::{
    DeclaredTool, Origin, ToolArgument, ToolMethod, ToolsFile, ToolsFileWarning, DEFAULT_SITE,
};
pub use error::{RouterBuildError, ToolsFileError};
pub use hierarchy::{TypeHierarchy, THING};
pub use limits::ToolsFileLimits;
pub use load::ToolsFileFormat;
pub use prompt::{RouteRequest, PLACEHOLDERS};
pub use route::{CandidateScore, NoMatch, Ran, Route, Routed, RouterRunError, ScoreSource};

/// Routes a query to one declared tool, and runs it. Built once with [`Router::builder`].
pub struct Router {
    model: Arc<dyn ChatModel>,
    executor: Option<Executor>,
    /// Enabled tools, in file order.
    tools: Vec<Prepared>,
    /// Canonical type -> its tools' positions in `tools`.
    by_type: HashMap<String, Vec<usize>>,
    types: TypeHierarchy,
    settings: Settings,
    /// The site a request naming none is for: the first the tools files name.
    site: Option<String>,
    /// The sites the enabled tools are declared for.
    sites: HashSet<String>,
    warnings: Vec<ToolsFileWarning>,
    cache: Option<cache::EvaluationCache>,
    #[cfg(feature = "retrieval")]
    prefilter: Option<prefilter::Prefilter>,
}

/// One enabled tool, ready to be evaluated.
struct Prepared {
    tool: DeclaredTool,
    /// The answer's schema.
    format: ResponseFormat,
    /// Whether the answer asks for more than the score.
    asks_for_parameters: bool,
    /// The handler's parameter names, when its schema lists them: only those are passed.
    keep: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
struct Settings {
    threshold: u8,
    early_stop: Option<u8>,
    fallback: Option<String>,
    max_concurrency: usize,
    evaluation_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threshold: 75,
            early_stop: None,
            fallback: None,
            max_concurrency: 8,
            evaluation_timeout: Duration::from_secs(20),
        }
    }
}

impl Router {
    /// Starts building a router that scores with this model. Pass an `Arc` of the model to
    /// keep a handle on it.
    pub fn builder(model: impl ChatModel + 'static) -> RouterBuilder {
        RouterBuilder::new(Arc::new(model))
    }

    /// What the tools files said that was not understood (also emitted as `tracing` warnings).
    pub fn warnings(&self) -> &[ToolsFileWarning] {
        &self.warnings
    }

    /// The type hierarchy in use.
    pub fn types(&self) -> &TypeHierarchy {
        &self.types
    }

    /// The enabled tools, in file order.
    pub fn tools(&self) -> impl Iterator<Item = &DeclaredTool> {
        self.tools.iter().map(|p| &p.tool)
    }

    /// The tools a query of this type is offered: those of the type and its ancestors, a
    /// subtype's overriding its ancestors' of the same name, in file order. For a
    /// request naming no site ([`Router::candidates_on`]).
    pub fn candidates(&self, schema_type: &str) -> Vec<&DeclaredTool> {
        self.candidates_on(schema_type, None)
    }

    /// [`Router::candidates`] for a request of this site: the tools declared for no site and
    /// those of the site, theirs overriding the others' of the same name. A request for a
    /// site no tool is declared for, or for none, is offered the [`DEFAULT_SITE`]'s tools
    /// when there are some (as NLWeb does), else every tool.
    pub fn candidates_on(&self, schema_type: &str, site: Option<&str>) -> Vec<&DeclaredTool> {
        self.candidate_positions(schema_type, site)
            .into_iter()
            .map(|i| &self.tools[i].tool)
            .collect()
    }

    /// The site whose own tools a request for `site` is offered; `None`: every tool.
    fn offered_site<'a>(&'a self, site: Option<&'a str>) -> Option<&'a str> {
        match site {
            Some(site) if self.sites.contains(site) => Some(site),
            _ if self.sites.contains(DEFAULT_SITE) => Some(DEFAULT_SITE),
            _ => None,
        }
    }

    fn candidate_positions(&self, schema_type: &str, site: Option<&str>) -> Vec<usize> {
        let site = self.offered_site(site);
        let lineage = self.types.lineage(schema_type);
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        // From the most general type to the most specific: the specific one overrides; within
        // a type, a site's own tool overrides one declared for every site.
        for schema_type in lineage.iter().rev() {
            let positions = self.by_type.get(schema_type).into_iter().flatten();
            let (everywhere, own): (Vec<usize>, Vec<usize>) = positions
                .filter(|&&i| {
                    let declared = self.tools[i].tool.site.as_deref();
                    site.is_none() || declared.is_none() || declared == site
                })
                .partition(|&&i| self.tools[i].tool.site.is_none());
            for index in everywhere.into_iter().chain(own) {
                by_name.insert(&self.tools[index].tool.name, index);
            }
        }
        let mut positions: Vec<usize> = by_name.into_values().collect();
        positions.sort_unstable();
        positions
    }

    /// Routes a query of this schema.org type (unknown types are read as `Thing`).
    pub async fn route(&self, query: &str, schema_type: &str) -> Route {
        self.route_request(&RouteRequest::new(query, schema_type))
            .await
    }

    /// Routes a request that says more: the site and the conversation, for the prompts.
    pub async fn route_request(&self, request: &RouteRequest) -> Route {
        let span = tracing::info_span!(
            "ai_tool.route",
            schema_type = %request.schema_type,
            gen_ai.request.model = self.model.model_name(),
        );
        // The tools offered are those of the site the request names; the tools files' site
        // only fills the prompts' `{request.site}`.
        let site = request.site.as_deref();
        if request.site.is_none() && self.site.is_some() {
            let mut filled = request.clone();
            filled.site = self.site.clone();
            return self.route_filled(&filled, site).instrument(span).await;
        }
        self.route_filled(request, site).instrument(span).await
    }

    /// Routes, then runs the chosen tool's handler through the executor (validation, time
    /// limits, panic isolation and all).
    pub async fn run(&self, query: &str, schema_type: &str) -> Result<Ran, RouterRunError> {
        self.run_request(&RouteRequest::new(query, schema_type))
            .await
    }

    /// [`Router::run`] for a request that says more.
    pub async fn run_request(&self, request: &RouteRequest) -> Result<Ran, RouterRunError> {
        let Some(executor) = &self.executor else {
            return Err(RouterRunError::NoExecutor);
        };
        let routed = match self.route_request(request).await {
            Route::Tool(routed) => routed,
            Route::NoMatch(none) => return Err(RouterRunError::NoMatch(Box::new(none))),
        };
        let arguments = Value::Object(routed.params.clone());
        match executor.execute(&routed.handler, arguments).await {
            Ok(output) => Ok(Ran { routed, output }),
            Err(error) => Err(RouterRunError::Tool {
                routed: Box::new(routed),
                error,
            }),
        }
    }
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("tools", &self.tools.len())
            .field("settings", &self.settings)
            .field("executor", &self.executor.is_some())
            .finish_non_exhaustive()
    }
}
