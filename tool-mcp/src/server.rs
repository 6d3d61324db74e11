//! [`McpServer`]: an [`Executor`] as an MCP server, implementing rmcp's `ServerHandler` by hand.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmcp::model::ErrorCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ContentBlock, CreateTaskResult, GetTaskParams, GetTaskResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, TaskPayload, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use tracing::Instrument;

use crate::trace_context;
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;
use tool_core::cap::ResultCap;
use tool_core::{TaskSupport, ToolError, ToolErrorKind, ToolOutput};
use tool_runtime::{CallOptions, Executor};

use crate::convert::result_from_output;
use crate::listing::{Following, Listing, Serving, Source};
use crate::notify::{self, SessionLogLevel};
use crate::rounds::{Rounds, StateKey};
use crate::search::{self, Found, SEARCH_TOOL};
use crate::tasks::{self, TaskLimits, TaskStore};
use crate::{McpError, McpTools};

/// How many tools one `tools/list` page holds. A client following `nextCursor` gets the rest.
pub const TOOLS_PER_PAGE: usize = 500;

/// An [`Executor`] served over MCP: `tools/list` from a list built once, `tools/call` through
/// the executor (validation, time limits, panic isolation, cancellation).
///
/// A tool's `ctx.log(..)` messages reach the client at or above the level it asked for: per
/// request (`_meta`, protocol 2026-07-28) or per session (`logging/setLevel`); none before it
/// asks.
///
/// Cheap to clone: the clones share the executor and the list. Each clone serves one session
/// (an HTTP server clones it per session): the logging level, and with
/// [`McpServer::with_search`] the tools found, are the clone's own.
pub struct McpServer {
    /// The executor it was made with.
    exec: Executor,
    /// What it serves: that executor's tools, and those of the servers it follows.
    source: Source,
    info: Implementation,
    /// [`McpServer::with_instructions`].
    instructions: Option<Arc<str>>,
    /// What it serves besides the executor's ordinary tools.
    serving: Serving,
    limits: CallLimits,
    /// The most bytes of one `tools/call` result (`with_max_result_bytes`).
    max_result_bytes: usize,
    /// The calls running now, in every session: at most `limits.total`.
    running: Arc<Semaphore>,
    /// The calls running or ended as tasks, in every session.
    tasks: Arc<TaskStore>,
    /// Seals the state of a call's question rounds (protocol 2026-07-28).
    state_key: StateKey,
    session: Arc<Session>,
}

/// How many `tools/call`s a server runs at once. A call past either cap is answered at once
/// with a JSON-RPC error that names the cap (code -32000, to be retried later): nothing waits
/// in a queue without bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallLimits {
    /// In one session (one client). Default 32.
    pub per_session: usize,
    /// In all sessions together. Default 256.
    pub total: usize,
    /// The longest one call may run, its tool's own time limit included: past it the call is
    /// cancelled and answered with an error result naming this limit, and its slot is free
    /// again. Default 300 s.
    pub call_timeout: std::time::Duration,
}

impl CallLimits {
    /// The default of [`CallLimits::per_session`].
    pub const DEFAULT_PER_SESSION: usize = 32;
    /// The default of [`CallLimits::total`].
    pub const DEFAULT_TOTAL: usize = 256;
    /// The default of [`CallLimits::call_timeout`]: 300 s.
    pub const DEFAULT_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

    /// These limits with another longest time for one call.
    pub fn with_call_timeout(mut self, limit: std::time::Duration) -> Self {
        self.call_timeout = limit;
        self
    }

    /// These limits with another cap per session.
    pub fn with_per_session(mut self, max: usize) -> Self {
        self.per_session = max;
        self
    }

    /// These limits with another cap for the whole server.
    pub fn with_total(mut self, max: usize) -> Self {
        self.total = max;
        self
    }
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            per_session: Self::DEFAULT_PER_SESSION,
            total: Self::DEFAULT_TOTAL,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
        }
    }
}

/// The JSON-RPC code of a call refused because too many are running: a server error, to be
/// tried again later.
const BUSY: ErrorCode = ErrorCode(-32000);

/// What one session (one client) sets.
#[derive(Debug)]
struct Session {
    /// The calls running now in this session.
    running: Arc<Semaphore>,
    log_level: SessionLogLevel,
    found: Found,
    /// The tasks that tell this client when a followed server's list changes.
    watchers: std::sync::Mutex<Vec<AbortHandle>>,
    /// Whether the client was told the list changed and has not listed it since: it is not
    /// told again until it does, so that a client gone without a word is not kept alive by
    /// notifications.
    told: Arc<AtomicBool>,
    /// The followed servers' generations when the client first listed the tools, which may be
    /// before it says it is ready: its watchers start from them.
    first_listed: std::sync::Mutex<Option<Vec<u64>>>,
}

impl Session {
    fn new(limits: &CallLimits) -> Self {
        Session {
            running: Arc::new(Semaphore::new(
                limits.per_session.min(Semaphore::MAX_PERMITS),
            )),
            log_level: SessionLogLevel::default(),
            found: Found::default(),
            watchers: std::sync::Mutex::default(),
            told: Arc::default(),
            first_listed: std::sync::Mutex::default(),
        }
    }
}

/// A session's watchers end with it.
impl Drop for Session {
    fn drop(&mut self) {
        let watchers = self
            .watchers
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for watcher in watchers.drain(..) {
            watcher.abort();
        }
    }
}

impl Clone for McpServer {
    /// The same server for another session: the executor, the list and the running calls
    /// are shared, what a session sets is not.
    fn clone(&self) -> Self {
        self.for_session()
    }
}

impl McpServer {
    /// A server for every executable tool of `exec`, named after this crate.
    ///
    /// Fails when a tool's declaration is not a valid MCP tool (it always is for specs the
    /// executor accepted; the check is kept so that a bug shows as an error, not a bad list).
    pub fn new(exec: Executor) -> Result<Self, McpError> {
        let listing = Listing::new(exec.clone(), None, Serving::default())?;
        let limits = CallLimits::default();
        Ok(McpServer {
            exec,
            source: Source::Fixed(Arc::new(listing)),
            info: Implementation::new("ai-tool", env!("CARGO_PKG_VERSION")),
            instructions: None,
            serving: Serving::default(),
            running: Arc::new(Semaphore::new(limits.total.min(Semaphore::MAX_PERMITS))),
            tasks: Arc::new(TaskStore::new(TaskLimits::default())),
            state_key: StateKey::random(),
            session: Arc::new(Session::new(&limits)),
            limits,
            max_result_bytes: Self::DEFAULT_MAX_RESULT_BYTES,
        })
    }

    /// The default of [`McpServer::with_max_result_bytes`]: 100,000 bytes, some 25,000
    /// tokens, as the agent loop's.
    pub const DEFAULT_MAX_RESULT_BYTES: usize = 100_000;

    /// The same server sending at most `bytes` of one `tools/call` result (text, image data
    /// and structured JSON together; default [`McpServer::DEFAULT_MAX_RESULT_BYTES`]), or the
    /// tool's own `max_result_bytes` when it is smaller. A longer result keeps the head and
    /// tail of its text around a line that says what was left out and names the setting;
    /// attachments that do not fit and the structured result are left out (a tool with an output
    /// schema then answers with an error result, which needs none). `usize::MAX` sends every
    /// result whole.
    pub fn with_max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// The same server for another session (what an HTTP server makes for each client).
    pub(crate) fn for_session(&self) -> Self {
        McpServer {
            exec: self.exec.clone(),
            source: self.source.clone(),
            info: self.info.clone(),
            instructions: self.instructions.clone(),
            serving: self.serving,
            limits: self.limits,
            max_result_bytes: self.max_result_bytes,
            running: Arc::clone(&self.running),
            tasks: Arc::clone(&self.tasks),
            state_key: self.state_key.clone(),
            session: Arc::new(Session::new(&self.limits)),
        }
    }

    /// The same server sealing the state of its question rounds (a tool's questions to a
    /// client of protocol 2026-07-28, asked with `input_required`) with `key` (at least 32
    /// bytes) rather than a random key of its own: replicas behind a load balancer share one,
    /// so that a round's answer reaching another replica is taken there.
    pub fn with_request_state_key(mut self, key: &[u8]) -> Result<Self, McpError> {
        self.state_key = StateKey::given(key).map_err(McpError::Imports)?;
        Ok(self)
    }

    /// The same server keeping its tasks (calls of tools marked `task`) within `limits`
    /// (default [`TaskLimits`]). Set it before the server is served.
    pub fn with_task_limits(mut self, limits: TaskLimits) -> Self {
        self.tasks = Arc::new(TaskStore::new(limits));
        self
    }

    /// The same server running at most `limits` calls at once (default [`CallLimits`]).
    /// Set it before the server is served: sessions made before keep the caps they had.
    pub fn with_call_limits(mut self, limits: CallLimits) -> Self {
        self.running = Arc::new(Semaphore::new(limits.total.min(Semaphore::MAX_PERMITS)));
        self.session = Arc::new(Session::new(&limits));
        self.limits = limits;
        self
    }

    /// A permit for one more call, or the error that says which cap it is past.
    fn permit(&self) -> Result<(OwnedSemaphorePermit, OwnedSemaphorePermit), ErrorData> {
        let busy = |what: &str, max: usize, setting: &str| {
            let message = format!(
                "too many tool calls in progress {what}: {max} ({setting}); \
                 try again when one has finished"
            );
            ErrorData::new(BUSY, message, None)
        };
        let session = Arc::clone(&self.session.running)
            .try_acquire_owned()
            .map_err(|_| {
                busy(
                    "in this session",
                    self.limits.per_session,
                    "CallLimits::per_session",
                )
            })?;
        let total = Arc::clone(&self.running)
            .try_acquire_owned()
            .map_err(|_| busy("on this server", self.limits.total, "CallLimits::total"))?;
        Ok((session, total))
    }

    /// The same server, introducing itself to clients as `name` `version`.
    pub fn with_server_info(mut self, name: &str, version: &str) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// The same server telling clients, in `initialize`, how to use its tools (MCP's
    /// `instructions`; an importer declares them as the group's description,
    /// `McpTools::declared_as_namespace`).
    pub fn with_instructions(mut self, instructions: &str) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The same server offering only a `search_tools` tool at first: each search (BM25 over
    /// the tools' names, descriptions and metadata) adds the tools it finds to the session's
    /// list, and the client is told with `notifications/tools/list_changed`. A tool not found
    /// yet cannot be called. For a client facing thousands of tools. Every tool is searched,
    /// `selectable` or not.
    ///
    /// Fails when a tool is already named `search_tools`.
    pub fn with_search(mut self) -> Result<Self, McpError> {
        let imports = self.source.imports().to_vec();
        self.serving.search = true;
        self.serving(imports)
    }

    /// The same server listing and running the tools marked `requires_approval` too. By
    /// default they are neither listed nor run: MCP has no way to ask a person before a call,
    /// so serving one hands its calls to whoever reaches the server. Say this only when the
    /// client asks its user before every call (or the server is the user's own).
    pub fn serving_tools_that_require_approval(mut self) -> Result<Self, McpError> {
        let imports = self.source.imports().to_vec();
        self.serving.approval_tools = true;
        self.serving(imports)
    }

    /// The same server serving the tools of MCP servers too, each named `namespace.tool` as
    /// [`McpTools`] names them, and following their lists: when one sends
    /// `notifications/tools/list_changed`, the server lists its tools again and tells each of
    /// its own clients with the same notification (a gateway that stays current). Calls to the
    /// imported tools are validated here and forwarded. Repeatable; the servers add up.
    ///
    /// Fails when an imported tool has the name of another tool. A later list that cannot be
    /// served (for the same reason) is logged, and the server goes on serving the list before.
    pub fn following(self, imports: Vec<McpTools>) -> Result<Self, McpError> {
        let mut all = self.source.imports().to_vec();
        all.extend(imports);
        self.serving(all)
    }

    /// This server with `imports` followed, serving as `self.serving` says.
    fn serving(mut self, imports: Vec<McpTools>) -> Result<Self, McpError> {
        self.source = if imports.is_empty() {
            Source::Fixed(Arc::new(Listing::new(
                self.exec.clone(),
                None,
                self.serving,
            )?))
        } else {
            Source::Following(Arc::new(Following::new(
                self.exec.clone(),
                imports,
                self.serving,
            )?))
        };
        Ok(self)
    }

    /// The executor it was made with (without the tools of the servers it follows).
    pub fn executor(&self) -> &Executor {
        &self.exec
    }

    /// Every tool it serves now (with [`McpServer::with_search`], a session lists
    /// `search_tools` and those it found).
    pub fn tools(&self) -> Arc<[Tool]> {
        Arc::clone(&self.source.listing().tools)
    }

    /// One page of what this session lists, starting after the cursor.
    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
        let listing = self.source.listing();
        let offered;
        let tools: &[Tool] = match &listing.search {
            None => &listing.tools,
            Some(search) => {
                let found = self.session.found.names();
                offered = std::iter::once(search.1.clone())
                    .chain(
                        listing
                            .tools
                            .iter()
                            .filter(|t| found.contains(&*t.name))
                            .cloned(),
                    )
                    .collect::<Vec<_>>();
                &offered
            }
        };
        page_of(tools, cursor)
    }

    /// With search on: runs `search_tools`, or refuses a tool the session has not found.
    /// `None` when the call goes on to the executor. A request that stands alone (protocol
    /// 2026-07-28 over HTTP, without a session) has no session to remember finds in: it may
    /// call any tool served, as a search of an earlier request found it, with its schema.
    async fn searched(
        &self,
        listing: &Listing,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResult, ErrorData>> {
        let search = listing.search.as_ref()?;
        let name: &str = &request.name;
        if name == SEARCH_TOOL {
            let empty = Default::default();
            let args = request.arguments.as_ref().unwrap_or(&empty);
            let (result, changed) =
                search::search(&search.0, &listing.tools, &self.session.found, args).await;
            let alone = stands_alone(context);
            if changed && !alone {
                let _ = context.peer.notify_tool_list_changed().await;
            }
            return Some(Ok(result));
        }
        let found = listing.tools.iter().any(|t| t.name == name)
            && (self.session.found.contains(name) || stands_alone(context));
        (!found).then(|| {
            Err(ErrorData::invalid_params(
                format!("tool `{name}` is not offered: find the tools for your task with `{SEARCH_TOOL}` first"),
                None,
            ))
        })
    }

    /// Whether the call goes on as a task: its tool takes tasks and the client does (protocol
    /// 2026-07-28 and the tasks extension declared). A tool that runs only as a task is
    /// refused to any other client.
    fn as_task(
        &self,
        exec: &Executor,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<bool, ErrorData> {
        let support = exec.spec(name).map(|s| s.metadata.task).unwrap_or_default();
        if support == TaskSupport::Forbidden {
            return Ok(false);
        }
        // The extension is not defined before 2026-07-28: a session of an older version is
        // answered when the call ends, whatever it declared.
        let takes_tasks = context
            .protocol_version()
            .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
        if support == TaskSupport::Required && !takes_tasks {
            let mut error = ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            );
            error.message = format!(
                "tool `{name}` runs only as a task: call it with protocol 2026-07-28 and the \
                 tasks extension (io.modelcontextprotocol/tasks) declared"
            )
            .into();
            return Err(error);
        }
        Ok(takes_tasks)
    }

    /// Starts the call as a task and answers with it at once: the call runs on, holding its
    /// permits, under the server's time limit, its progress told in the task's status message.
    fn start_task(
        &self,
        exec: Executor,
        name: String,
        args: Value,
        context: &RequestContext<RoleServer>,
        permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
    ) -> Result<CallToolResponse, ErrorData> {
        let (task, cancel) = self
            .tasks
            .create(session_of(context), self.limits.call_timeout)
            .map_err(|message| ErrorData::new(BUSY, message, None))?;
        let id = task.task_id.clone();
        let store = Arc::clone(&self.tasks);
        let progress: tool_runtime::ProgressSink = {
            let (store, id) = (Arc::clone(&store), id.clone());
            Arc::new(move |p: tool_runtime::Progress<'_>| {
                store.report(&id, tasks::progress_text(&p))
            })
        };
        let options = CallOptions {
            call_id: Some(id.clone().into()),
            cancellation: Some(cancel.clone()),
            progress: Some(progress),
            ..CallOptions::default()
        };
        let (limit, max_result_bytes) = (self.limits.call_timeout, self.max_result_bytes);
        let finishing = tasks::Finishing::new(Arc::clone(&store), id.clone());
        let run = async move {
            let _permits = permits;
            let outcome =
                tokio::time::timeout(limit, exec.execute_with(&name, args, &options)).await;
            let payload = match outcome {
                Err(_) => {
                    cancel.cancel();
                    tasks::completed(&timed_out(&name, limit))
                }
                Ok(Err(ToolError::Cancelled { .. })) if cancel.is_cancelled() => {
                    TaskPayload::Cancelled
                }
                Ok(Ok(output)) => tasks::completed(&result_from_output(held(
                    max_result_bytes,
                    &exec,
                    &name,
                    output,
                ))),
                Ok(Err(e)) => tasks::completed(&CallToolResult::error(vec![ContentBlock::text(
                    e.to_model_text(),
                )])),
            };
            finishing.finish(payload);
        };
        tokio::spawn(run.in_current_span());
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// A result within the server's cap, or the tool's own when it is smaller.
    fn held(&self, exec: &Executor, name: &str, output: ToolOutput) -> ToolOutput {
        held(self.max_result_bytes, exec, name, output)
    }

    /// Runs one call. Tool errors are results with `isError: true` and the text a model reads;
    /// only an unknown tool is a protocol error.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let permits = self.permit()?;
        let listing = self.source.listing();
        if let Some(answer) = self.searched(&listing, &request, &context).await {
            return answer.map(Into::into);
        }
        let name: &str = &request.name;
        let unlisted_approval_tool = !listing.lists(name)
            && listing
                .executor_for(name)
                .spec(name)
                .is_some_and(|spec| spec.metadata.requires_approval);
        if unlisted_approval_tool {
            let message = format!(
                "tool `{name}` requires a person's approval, which MCP cannot ask for: it is not \
                 served (McpServer::serving_tools_that_require_approval serves it)"
            );
            return Err(ErrorData::invalid_params(message, None));
        }
        // A client of 2026-07-28 takes no requests from the server: a tool's questions go to it
        // as `input_required` rounds, when it declares elicitation.
        // The client's cancellation, and the server's time limit, end the call; so does a
        // question asked in rounds without an answer yet.
        let cancellation = context.ct.child_token();
        let rounds = match by_rounds(&context) {
            true => Some(Rounds::of(&request, &self.state_key, cancellation.clone())?),
            false => None,
        };
        // What a round's state is bound to: the tool and its arguments.
        let asked = rounds.as_ref().map(|_| {
            let mut asked = CallToolRequestParams::new(request.name.clone());
            asked.arguments = request.arguments.clone();
            asked
        });
        let args = Value::Object(request.arguments.unwrap_or_default());
        let exec = listing.executor_for(name);
        if self.as_task(exec, name, &context)? {
            return self.start_task(exec.clone(), name.to_owned(), args, &context, permits);
        }
        let _permits = permits;
        let id = context.id.to_string();
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref()?.get_progress_token());
        #[allow(deprecated)] // MCP logging, see `notify`
        let log_level = context
            .meta
            .log_level()
            .map(notify::log_level)
            .or_else(|| self.session.log_level.get());
        let elicit = match &rounds {
            Some(rounds) => Some(rounds.elicitor()),
            None => crate::elicit::elicitor(&context.peer),
        };
        let sample = crate::sample::sampler(&context.peer);
        let (progress, log, flush) = notify::sinks(context.peer, token, log_level, name);
        let options = CallOptions {
            call_id: Some(id.into()),
            cancellation: Some(cancellation.clone()),
            progress,
            log,
            elicit,
            sample,
            ..CallOptions::default()
        };
        let limit = self.limits.call_timeout;
        let outcome =
            match tokio::time::timeout(limit, exec.execute_with(name, args, &options)).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    cancellation.cancel();
                    flush.done().await;
                    return Ok(timed_out(name, limit).into());
                }
            };
        // The reports before the result: none may follow it.
        flush.done().await;
        if let (Some(rounds), Some(request)) = (&rounds, &asked) {
            if let Some(asked) = rounds.input_required(request, &self.state_key)? {
                return Ok(CallToolResponse::InputRequired(asked));
            }
        }
        match outcome {
            Ok(output) => Ok(result_from_output(self.held(exec, name, output)).into()),
            Err(ToolError::UnknownTool { name, suggestions }) => {
                // With other servers' tools beside the executor's, close names come from all.
                let suggestions = if listing.has_imports() {
                    let listed = listing.tools.iter().map(|t| &*t.name);
                    tool_core::suggest::closest_names(&name, listed, 3)
                } else {
                    suggestions
                };
                let e = ToolError::UnknownTool { name, suggestions };
                Err(ErrorData::invalid_params(e.to_model_text(), None))
            }
            Err(e) => {
                if e.kind() != ToolErrorKind::InvalidArguments {
                    tracing::debug!(tool = name, error = %e, "MCP tool call failed");
                }
                Ok(CallToolResult::error(vec![ContentBlock::text(e.to_model_text())]).into())
            }
        }
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging, see `notify`
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging();
        let listed_again =
            self.source.listing().search.is_some() || !self.source.imports().is_empty();
        let capabilities = if listed_again {
            capabilities.enable_tool_list_changed()
        } else {
            capabilities
        };
        let takes_tasks = self
            .exec
            .tools()
            .any(|spec| spec.metadata.task != TaskSupport::Forbidden);
        let capabilities = if takes_tasks {
            capabilities.enable_tasks().build()
        } else {
            capabilities.build()
        };
        let config = ServerConfig::new(capabilities).with_server_info(self.info.clone());
        match &self.instructions {
            Some(instructions) => config.with_instructions(instructions.as_ref()),
            None => config,
        }
    }

    #[allow(deprecated)] // MCP logging, see `notify`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.log_level.set(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.session.told.store(false, Ordering::Relaxed);
        self.session
            .first_listed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert_with(|| {
                self.source
                    .imports()
                    .iter()
                    .map(McpTools::generation)
                    .collect()
            });
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let listing = self.source.listing();
        match &listing.search {
            Some(search) if name == SEARCH_TOOL => Some(search.1.clone()),
            _ => listing.tools.iter().find(|t| t.name == name).cloned(),
        }
    }

    /// Once a client is ready: when the server follows others, a watcher per followed server
    /// tells this client when that server's list changes, until the session ends. (A client
    /// that skips the `initialize` handshake, as protocol 2026-07-28 allows, is not told.)
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut watchers = self
            .session
            .watchers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !watchers.is_empty() {
            return; // a second `notifications/initialized`
        }
        let first_listed = self
            .session
            .first_listed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for (i, import) in self.source.imports().iter().enumerate() {
            let import = import.clone();
            let peer = context.peer.clone();
            let told = Arc::clone(&self.session.told);
            // The generation the client's lists have seen: of its first list, or now, read
            // before anything can change it. A change since that list is told at once.
            let seen = first_listed.as_ref().and_then(|g| g.get(i).copied());
            let mut generation = seen.unwrap_or_else(|| import.generation());
            let watcher = tokio::spawn(async move {
                loop {
                    import.changed_after(generation).await;
                    generation = import.generation();
                    if !told.swap(true, Ordering::Relaxed)
                        && peer.notify_tool_list_changed().await.is_err()
                    {
                        break;
                    }
                }
            });
            watchers.push(watcher.abort_handle());
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let metas = [Some(&*context.meta), request.meta.as_deref()];
        let span = trace_context::served_call(&request.name, &context.id.to_string(), &metas);
        let answer = self.call(request, context).instrument(span.clone()).await;
        match &answer {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                trace_context::failed(&span, "tool_error")
            }
            Ok(_) => {}
            Err(error) => trace_context::failed(&span, &error.code.0.to_string()),
        }
        answer
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = self
            .tasks
            .get(&request.task_id, session_of(&context).as_deref())?;
        Ok(GetTaskResult::new(task))
    }

    /// A task of ours never asks for input: an update of one that exists is acknowledged and
    /// changes nothing (answers to requests it did not make are ignored, as the extension says).
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .get(&request.task_id, session_of(&context).as_deref())
            .map(|_| ())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .cancel(&request.task_id, session_of(&context).as_deref())
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let listing = self.source.listing();
        f.debug_struct("McpServer")
            .field("tools", &listing.tools.len())
            .field("info", &self.info)
            .field("search", &listing.search.is_some())
            .field("following", &self.source.imports().len())
            .finish()
    }
}

/// The answer to a call that ran past the server's time limit.
fn timed_out(name: &str, limit: std::time::Duration) -> CallToolResult {
    let timed_out = ToolError::TimedOut {
        tool: name.to_owned(),
        after: limit,
    };
    let text = format!(
        "{} (the server's limit, CallLimits::call_timeout)",
        timed_out.to_model_text()
    );
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Whether a call's questions go to its client as `input_required` rounds: a request of
/// protocol 2026-07-28 (its context in `_meta`) from a client that declares (form)
/// elicitation in it.
fn by_rounds(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .meta
        .protocol_version()
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28);
    modern
        && context.meta.client_capabilities().is_some_and(|c| {
            c.elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none())
        })
}

/// The session a request belongs to, when it is in one (over HTTP, its `Mcp-Session-Id`).
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    let http = context.extensions.get::<axum::http::request::Parts>()?;
    let id = http.headers.get("mcp-session-id")?.to_str().ok()?;
    Some(id.to_owned())
}

/// `output` within `max_result_bytes`, or the tool's own cap when it is smaller.
fn held(max_result_bytes: usize, exec: &Executor, name: &str, output: ToolOutput) -> ToolOutput {
    let spec = exec.spec(name);
    let cap = ResultCap::narrowed_by(
        max_result_bytes,
        "McpServer::with_max_result_bytes",
        spec.and_then(|spec| spec.metadata.max_result_bytes),
    );
    let (mut held, left_out) = cap.hold_output(output);
    // A client checks a successful result against the tool's output schema.
    if left_out.structured && spec.is_some_and(|spec| spec.output_schema.is_some()) {
        held.is_error = true;
    }
    held
}

/// Whether a request stands alone: protocol 2026-07-28 (its context in `_meta`) over HTTP
/// without a session, where each request is served by a server of its own.
fn stands_alone(context: &RequestContext<RoleServer>) -> bool {
    let Some(http) = context.extensions.get::<axum::http::request::Parts>() else {
        return false;
    };
    let version = context.meta.protocol_version();
    !http.headers.contains_key("mcp-session-id")
        && version.is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
}

/// One page of `tools`: the first [`TOOLS_PER_PAGE`] after the tool the cursor names (the
/// last of the page before). A cursor names a tool rather than a position, so a list that
/// changes between pages neither skips nor repeats a tool that stays in it; a cursor whose
/// tool is gone is refused, and the client lists again (it has been told of the change).
fn page_of(tools: &[Tool], cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(c) => tools
            .iter()
            .position(|tool| *tool.name == *c)
            .map(|i| i + 1)
            .ok_or_else(|| {
                // A client's cursor is not echoed back whole: it may be megabytes.
                let shown: String = c.chars().take(40).collect();
                let cut = if shown.len() < c.len() { "..." } else { "" };
                let message = format!(
                    "invalid cursor `{shown}{cut}`: the tool list changed since it was given; \
                     list again from the start"
                );
                ErrorData::invalid_params(message, None)
            })?,
    };
    let end = tools.len().min(start.saturating_add(TOOLS_PER_PAGE));
    let mut page = ListToolsResult::with_all_items(tools[start..end].to_vec());
    if end < tools.len() {
        page.next_cursor = Some(tools[end - 1].name.to_string());
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: impl IntoIterator<Item = usize>) -> Vec<Tool> {
        names
            .into_iter()
            .map(|i| Tool::new(format!("t{i:04}"), "A tool", rmcp::model::JsonObject::new()))
            .collect()
    }

    fn names(page: &ListToolsResult) -> Vec<String> {
        page.tools.iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn a_list_that_changes_between_pages_neither_skips_nor_repeats_a_tool() {
        let before = tools(0..TOOLS_PER_PAGE + 10);
        let first = page_of(&before, None).unwrap();
        let cursor = first.next_cursor.clone().expect("a second page");
        // Two tools of the first page go, one arrives before the cursor's tool.
        let mut after = tools(2..TOOLS_PER_PAGE + 10);
        after.insert(
            5,
            Tool::new("new", "A tool", rmcp::model::JsonObject::new()),
        );
        let second = page_of(&after, Some(&cursor)).unwrap();
        let expected: Vec<String> = (TOOLS_PER_PAGE..TOOLS_PER_PAGE + 10)
            .map(|i| format!("t{i:04}"))
            .collect();
        assert_eq!(names(&second), expected);
        assert!(second.next_cursor.is_none());
    }

    #[test]
    fn a_cursor_whose_tool_is_gone_is_refused() {
        let before = tools(0..TOOLS_PER_PAGE + 1);
        let cursor = page_of(&before, None).unwrap().next_cursor.unwrap();
        let after = tools(0..TOOLS_PER_PAGE - 1);
        let error = page_of(&after, Some(&cursor)).unwrap_err();
        assert!(error.message.contains("list again"), "{}", error.message);
        assert!(page_of(&after, Some("nonsense")).is_err());
        let huge = "c".repeat(1 << 20);
        let error = page_of(&after, Some(&huge)).unwrap_err();
        assert!(error.message.len() < 200, "{}", error.message.len());
    }
}
