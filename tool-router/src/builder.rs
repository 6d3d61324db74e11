//! Building a [`Router`]: the tools files, the executor that runs the handlers (checked at
//! build), the type hierarchy and the selection settings.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_runtime::Executor;

use crate::answer::{answer_schema, asks_for_parameters};
use crate::cache::EvaluationCache;
use crate::declared::{DeclaredTool, ToolsFile, ToolsFileWarning};
use crate::error::RouterBuildError;
use crate::hierarchy::{canonical, TypeHierarchy};
use crate::prompt::unknown_placeholders;
use crate::{Prepared, Router, Settings};
use tool_model::structured::ResponseFormat;
use tool_model::ChatModel;

/// Builds a [`Router`]; from [`Router::builder`].
pub struct RouterBuilder {
    model: Arc<dyn ChatModel>,
    tools_files: Vec<ToolsFile>,
    executor: Option<Executor>,
    types: TypeHierarchy,
    settings: Settings,
    cache: usize,
    /// Run handlers marked `requires_approval` without asking anyone.
    approval_handlers: bool,
    #[cfg(feature = "retrieval")]
    prefilter: Option<crate::prefilter::PrefilterSetting>,
}

impl RouterBuilder {
    pub(crate) fn new(model: Arc<dyn ChatModel>) -> Self {
        RouterBuilder {
            model,
            tools_files: Vec::new(),
            executor: None,
            types: TypeHierarchy::schema_org(),
            settings: Settings::default(),
            cache: 0,
            approval_handlers: false,
            #[cfg(feature = "retrieval")]
            prefilter: None,
        }
    }

    /// Lets [`Router::run`](crate::Router::run) run handlers marked
    /// `requires_approval`. The router asks nobody before it runs a handler, so by default a
    /// router whose tools file names one is not built
    /// ([`RouterBuildError::RequiresApproval`]); say this only when the query itself is the
    /// person's approval.
    pub fn run_handlers_that_require_approval(mut self) -> Self {
        self.approval_handlers = true;
        self
    }

    /// The tools to route among: a tools file's (read from a file, or built in code). May be
    /// given more than once: the tools are taken in the order given.
    pub fn tools_file(mut self, tools_file: ToolsFile) -> Self {
        self.tools_files.push(tools_file);
        self
    }

    /// The executor whose tools are the handlers. With one, `build` checks that every enabled
    /// declared tool's handler is an executable tool, the answer's fields are typed by the
    /// handler's parameters, and the winner's parameters are validated before it is chosen.
    /// Without one, the router routes but cannot run.
    pub fn executor(mut self, executor: Executor) -> Self {
        self.executor = Some(executor);
        self
    }

    /// The type hierarchy (the built-in schema.org table by default); a file's `types` are
    /// added to it.
    pub fn types(mut self, types: TypeHierarchy) -> Self {
        self.types = types;
        self
    }

    /// Adds one type under `parent`.
    pub fn subtype(mut self, child: impl Into<String>, parent: impl Into<String>) -> Self {
        self.types.add(child, parent);
        self
    }

    /// The lowest score a tool is chosen with (default 75).
    pub fn threshold(mut self, score: u8) -> Self {
        self.settings.threshold = score;
        self
    }

    /// Stops evaluating as soon as one tool scores at least `score` (off by default: every
    /// candidate is scored and the best wins; NLWeb stops at 90).
    pub fn early_stop(mut self, score: u8) -> Self {
        self.settings.early_stop = Some(score);
        self
    }

    /// The tool chosen when nothing reaches the threshold (NLWeb's is `search`), if it is a
    /// candidate for the query's type.
    pub fn fallback(mut self, tool: impl Into<String>) -> Self {
        self.settings.fallback = Some(tool.into());
        self
    }

    /// How many evaluations run at once (default 8).
    pub fn max_concurrency(mut self, evaluations: usize) -> Self {
        self.settings.max_concurrency = evaluations.max(1);
        self
    }

    /// The longest one evaluation may take (default 20 s); past it, the tool scores 0.
    pub fn evaluation_timeout(mut self, limit: Duration) -> Self {
        self.settings.evaluation_timeout = limit;
        self
    }

    /// Keeps up to `entries` evaluations, by tool and filled prompt, and reuses them (off by
    /// default).
    pub fn cache(mut self, entries: usize) -> Self {
        self.cache = entries;
        self
    }

    /// Scores only the `k` candidates a BM25 retriever ranks best for the query (over each
    /// tool's name, prompt and examples); the others are left out (feature `retrieval`).
    #[cfg(feature = "retrieval")]
    pub fn prefilter(mut self, k: usize) -> Self {
        self.prefilter = Some(crate::prefilter::PrefilterSetting::Lexical(k));
        self
    }

    /// Scores only the `k` candidates this retriever ranks best. It must have been built over
    /// [`ToolsFile::retrieval_specs`] (names `Type/tool`).
    #[cfg(feature = "retrieval")]
    pub fn prefilter_with(mut self, retriever: tool_retrieval::Retriever, k: usize) -> Self {
        self.prefilter = Some(crate::prefilter::PrefilterSetting::Given(
            Box::new(retriever),
            k,
        ));
        self
    }

    /// The router. Fails when a tools file breaks the rules, an enabled tool's handler is not
    /// an executable tool of the executor, or the fallback is not declared.
    pub fn build(self) -> Result<Router, RouterBuildError> {
        let RouterBuilder {
            model,
            tools_files,
            executor,
            mut types,
            settings,
            cache,
            approval_handlers,
            #[cfg(feature = "retrieval")]
            prefilter,
        } = self;
        let mut site = None;
        let mut warnings: Vec<ToolsFileWarning> = Vec::new();
        let mut all: Vec<DeclaredTool> = Vec::new();
        for declared in tools_files {
            crate::load::check(&declared)?;
            for (child, parent) in &declared.types {
                types.add(child.clone(), parent.clone());
            }
            site = site.or(declared.site);
            warnings.extend(declared.warnings);
            all.extend(declared.tools.into_iter().filter(|t| t.enabled));
        }
        crate::load::check(&ToolsFile {
            tools: all.clone(),
            ..ToolsFile::default()
        })?;
        if let Some(exec) = &executor {
            for tool in &all {
                let handler = tool.handler_name();
                if !exec.is_executable(handler) {
                    let names: Vec<&str> = exec.tools().map(|s| s.name.as_str()).collect();
                    return Err(RouterBuildError::MissingHandler {
                        tool: tool.name.clone(),
                        handler: handler.to_owned(),
                        origin: Box::new(tool.origin.clone()),
                        suggestions: tool_core::suggest::closest_names(handler, names, 3),
                    });
                }
                let needs_approval = exec
                    .spec(handler)
                    .is_some_and(|spec| spec.metadata.requires_approval);
                if needs_approval && !approval_handlers {
                    return Err(RouterBuildError::RequiresApproval {
                        tool: tool.name.clone(),
                        handler: handler.to_owned(),
                        origin: Box::new(tool.origin.clone()),
                    });
                }
            }
        }
        if let Some(fallback) = &settings.fallback {
            if !all.iter().any(|t| &t.name == fallback) {
                return Err(RouterBuildError::UnknownFallback(fallback.clone()));
            }
        }
        if settings.threshold > 100 || settings.early_stop.is_some_and(|s| s > 100) {
            return Err(RouterBuildError::Setting(
                "the threshold and the early-stop mark are scores from 0 to 100".into(),
            ));
        }
        if let Some(mark) = settings
            .early_stop
            .filter(|&mark| mark < settings.threshold)
        {
            return Err(RouterBuildError::Setting(format!(
                "the early-stop mark ({mark}) is below the threshold ({}): a score that \
                 stops the scoring must be one that can win",
                settings.threshold
            )));
        }
        let sites = all.iter().filter_map(|t| t.site.clone()).collect();
        let mut by_type: HashMap<String, Vec<usize>> = HashMap::new();
        let mut tools = Vec::with_capacity(all.len());
        for (index, tool) in all.into_iter().enumerate() {
            for name in unknown_placeholders(&tool.prompt) {
                warnings.push(ToolsFileWarning {
                    origin: tool.origin.clone(),
                    message: format!(
                        "unknown placeholder {{{name}}} in the prompt of `{}`, left as written",
                        tool.name
                    ),
                });
            }
            let handler = executor.as_ref().and_then(|e| e.spec(tool.handler_name()));
            let schema = answer_schema(&tool, handler);
            let keep = handler.and_then(|spec| {
                spec.parameters
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
            });
            by_type
                .entry(canonical(&tool.schema_type).to_owned())
                .or_default()
                .push(index);
            tools.push(Prepared {
                asks_for_parameters: asks_for_parameters(&schema),
                format: ResponseFormat::new(format!("{}_answer", tool.name), schema),
                keep,
                tool,
            });
        }
        for warning in &warnings {
            tracing::warn!(%warning, "tools file");
        }
        #[cfg(feature = "retrieval")]
        let prefilter = prefilter.map(|setting| crate::prefilter::Prefilter::new(setting, &tools));
        Ok(Router {
            model,
            executor,
            tools,
            by_type,
            types,
            settings,
            site,
            sites,
            warnings,
            cache: (cache > 0).then(|| EvaluationCache::new(cache)),
            #[cfg(feature = "retrieval")]
            prefilter,
        })
    }
}
