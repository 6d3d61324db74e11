//! What an [`McpServer`](crate::McpServer) serves at one moment (a [`Listing`]), and where
//! that comes from (a [`Source`]): one executor, or one executor and MCP servers whose lists
//! it follows (a gateway).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::Tool;
use tool_core::ToolSpec;
use tool_retrieval::Retriever;
use tool_runtime::Executor;

use crate::convert::tool_from_spec;
use crate::refreshing::generations;
use crate::search::{self, SEARCH_TOOL};
use crate::{McpError, McpTools, RefreshingExecutor};

/// What a server serves besides its executor's ordinary tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Serving {
    /// Offer `search_tools` and the tools found.
    pub(crate) search: bool,
    /// List and run tools marked `requires_approval`, which MCP cannot ask a person about.
    pub(crate) approval_tools: bool,
}

/// The tools served at one moment, the executors that run them, and the search over them.
pub(crate) struct Listing {
    /// The executor the server was made with.
    local: Executor,
    /// The imported servers' tools, as last listed, when the server follows any.
    imported: Option<Executor>,
    /// Every executable tool of both, as listed.
    pub(crate) tools: Arc<[Tool]>,
    /// With search on: the retriever over `tools`, and the `search_tools` tool.
    pub(crate) search: Option<Arc<(Retriever, Tool)>>,
}

impl Listing {
    /// The listing of `local`'s executable tools and `imported`'s. Fails when a tool is not a
    /// valid MCP tool, or when two tools (or a tool and the search) share a name.
    pub(crate) fn new(
        local: Executor,
        imported: Option<Executor>,
        serving: Serving,
    ) -> Result<Self, McpError> {
        // A name is one tool's, whether or not it is served: an imported tool may not take the
        // name of a declared (catalog) tool either.
        let mut names = HashSet::new();
        let every = std::iter::once(&local).chain(imported.as_ref());
        if let Some(twice) = every
            .flat_map(Executor::tools)
            .find(|spec| !names.insert(spec.name.as_str()))
        {
            return Err(McpError::Declaration {
                tool: twice.name.clone(),
                message: "an imported server's tool has the name of another tool; give that \
                          server another namespace"
                    .into(),
            });
        }
        let specs: Vec<&ToolSpec> = std::iter::once(&local)
            .chain(imported.as_ref())
            .flat_map(|exec| exec.tools().filter(|spec| exec.is_executable(&spec.name)))
            .filter(|spec| serving.approval_tools || !spec.metadata.requires_approval)
            .collect();
        let tools = specs
            .iter()
            .map(|spec| {
                tool_from_spec(spec).map_err(|e| McpError::Declaration {
                    tool: spec.name.clone(),
                    message: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let search = serving.search.then(|| searching(&specs)).transpose()?;
        Ok(Listing {
            local,
            imported,
            tools: tools.into(),
            search,
        })
    }

    /// The executor that runs the tool called `name` (the server's own when neither has it, so
    /// that the unknown name is answered as usual).
    pub(crate) fn executor_for(&self, name: &str) -> &Executor {
        match &self.imported {
            Some(imported) if imported.spec(name).is_some() => imported,
            _ => &self.local,
        }
    }

    /// Whether the tool called `name` is listed (with search on, among all it can find).
    pub(crate) fn lists(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// Whether tools of other servers are listed beside the executor's.
    pub(crate) fn has_imports(&self) -> bool {
        self.imported.is_some()
    }
}

/// The search over `specs`. Every tool is found by searching, whether or not it is marked
/// `selectable`: the retriever's "system tools" (always offered) would be every tool of a
/// gateway.
fn searching(specs: &[&ToolSpec]) -> Result<Arc<(Retriever, Tool)>, McpError> {
    if specs.iter().any(|spec| spec.name == SEARCH_TOOL) {
        return Err(McpError::Declaration {
            tool: SEARCH_TOOL.into(),
            message: "the name is taken by the search itself; rename the tool".into(),
        });
    }
    let searchable: Vec<ToolSpec> = specs
        .iter()
        .map(|spec| {
            let mut spec = (*spec).clone();
            spec.metadata.selectable = true;
            spec
        })
        .collect();
    let retriever = Retriever::lexical(&searchable);
    Ok(Arc::new((retriever, search::search_tool())))
}

/// Where a server's listing comes from.
#[derive(Clone)]
pub(crate) enum Source {
    /// One executor, listed once.
    Fixed(Arc<Listing>),
    /// An executor and MCP servers whose lists it follows.
    Following(Arc<Following>),
}

impl Source {
    /// What is served now.
    pub(crate) fn listing(&self) -> Arc<Listing> {
        match self {
            Source::Fixed(listing) => Arc::clone(listing),
            Source::Following(following) => following.listing(),
        }
    }

    /// The imported servers followed, if any.
    pub(crate) fn imports(&self) -> &[McpTools] {
        match self {
            Source::Fixed(_) => &[],
            Source::Following(following) => following.imports.imports(),
        }
    }
}

/// An executor and the tools of MCP servers, listed again when a server's list changes.
pub(crate) struct Following {
    imports: RefreshingExecutor,
    serving: Serving,
    /// The servers' generations the listing was made for, and the listing.
    current: Mutex<(Vec<u64>, Arc<Listing>)>,
}

impl Following {
    /// Follows `imports` beside `local`'s tools.
    pub(crate) fn new(
        local: Executor,
        imports: Vec<McpTools>,
        serving: Serving,
    ) -> Result<Self, McpError> {
        refuse_shared_names(&imports)?;
        let now = generations(&imports);
        // The imported tools are held to the executor's limits and default time limit.
        let like = local.clone();
        let imports =
            RefreshingExecutor::new(move || like.builder_like(), imports).map_err(unbuildable)?;
        let exec = imports.executor();
        let listing = Listing::new(local, Some(exec), serving)?;
        Ok(Following {
            imports,
            serving,
            current: Mutex::new((now, Arc::new(listing))),
        })
    }

    /// The listing for the servers' lists as they are now. A new list that cannot be served
    /// (a name taken twice, say) is logged, and the previous listing stays until the next
    /// change.
    fn listing(&self) -> Arc<Listing> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let now = generations(self.imports.imports());
        if current.0 != now {
            let local = current.1.local.clone();
            let exec = self.imports.executor();
            let relisted = Listing::new(local, Some(exec), self.serving);
            match relisted {
                Ok(listing) => current.1 = Arc::new(listing),
                Err(error) => tracing::warn!(
                    %error,
                    "an imported MCP server's new tool list cannot be served; serving the previous one"
                ),
            }
            current.0 = now;
        }
        Arc::clone(&current.1)
    }
}

/// Two servers listing a tool of the same name (two servers that call themselves alike, and
/// so share a namespace): refused, since neither could be called by that name.
fn refuse_shared_names(imports: &[McpTools]) -> Result<(), McpError> {
    let mut listed_by: HashMap<String, usize> = HashMap::new();
    for (at, import) in imports.iter().enumerate() {
        for tool in import.listed().iter() {
            let name = format!("{}.{}", import.namespace(), tool.name);
            let first = *listed_by.entry(name.clone()).or_insert(at);
            if first != at {
                return Err(McpError::Imports(format!(
                    "two servers, `{}` and `{}`, list `{name}`: give one another namespace \
                     (`McpTools::with_namespace`, or `--upstream NAME=SOURCE`)",
                    imports[first].namespace(),
                    import.namespace()
                )));
            }
        }
    }
    Ok(())
}

/// The imported tools' problems, on one line.
fn unbuildable(error: tool_runtime::BuildError) -> McpError {
    let problems: Vec<String> = error.problems.iter().map(ToString::to_string).collect();
    McpError::Imports(problems.join("; "))
}
