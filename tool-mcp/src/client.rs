//! [`ImportClient`]: the client side of an import. It keeps the server's tool list, listed
//! again on `notifications/tools/list_changed`, and routes `notifications/progress` to the
//! context of the call that asked for them.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData, FormElicitationCapability, Implementation, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, Tool,
};
use rmcp::service::RequestContext;
use rmcp::service::{NotificationContext, Peer, RoleClient};
use rmcp::ClientHandler;
use tokio::sync::watch;
use tool_runtime::{Elicited, SamplingRequest, Speaker, ToolContext};

use crate::questions::Questions;

/// What the client and every tool made from it share.
pub(crate) struct ClientState {
    /// The server, as the user named it.
    pub(crate) server: Arc<str>,
    /// The server's tools, as last listed.
    tools: RwLock<Arc<[Tool]>>,
    /// How many times the list was listed again; the tools are listed once at connection.
    generation: watch::Sender<u64>,
    /// The calls in flight that want progress, by the token their request carries, with the
    /// progress last passed on.
    progress: Mutex<HashMap<ProgressToken, (ToolContext<'static>, Option<f64>)>>,
    /// Held while the tools are listed and kept, so that of two listings the later one is
    /// kept.
    relisting: tokio::sync::Mutex<()>,
    /// Whether a list change waits to be listed: the changes told meanwhile are all in the
    /// listing it will make.
    change_waiting: AtomicBool,
    /// What is taken from the server.
    pub(crate) limits: ImportLimits,
    /// The calls a server's questions go to.
    pub(crate) questions: Arc<Questions>,
    /// The server's process, when the import started it: killed when the last tool or
    /// connection goes.
    process: Mutex<Option<tokio::process::Child>>,
    /// The import's authorization, when it authorizes with OAuth.
    #[cfg(feature = "oauth")]
    oauth: std::sync::OnceLock<Arc<crate::oauth::OAuthSession>>,
}

impl ClientState {
    pub(crate) fn new(server: Arc<str>, limits: ImportLimits) -> Self {
        ClientState {
            limits,
            questions: Arc::default(),
            process: Mutex::default(),
            server,
            tools: RwLock::new(Arc::from(Vec::new())),
            generation: watch::Sender::new(0),
            progress: Mutex::default(),
            relisting: tokio::sync::Mutex::new(()),
            change_waiting: AtomicBool::new(false),
            #[cfg(feature = "oauth")]
            oauth: std::sync::OnceLock::new(),
        }
    }

    /// The import authorizes through `session`.
    #[cfg(feature = "oauth")]
    pub(crate) fn set_oauth(&self, session: Arc<crate::oauth::OAuthSession>) {
        let _ = self.oauth.set(session);
    }

    /// How many authorizations the import made (0 without OAuth): what a request was made
    /// under, for [`ClientState::authorized_again`].
    pub(crate) fn authorization(&self) -> u64 {
        #[cfg(feature = "oauth")]
        if let Some(session) = self.oauth.get() {
            return session.generation();
        }
        0
    }

    /// After a request made under authorization `seen` failed with `error`: whether the
    /// import authorized (or another request did meanwhile), so that the request may be made
    /// again. `Err` when authorizing failed; `Ok(false)` when the error asks for none, or the
    /// import does not authorize.
    pub(crate) async fn authorized_again(
        &self,
        error: &rmcp::service::ServiceError,
        seen: u64,
    ) -> Result<bool, String> {
        #[cfg(feature = "oauth")]
        if let Some(session) = self.oauth.get() {
            let challenge = error.auth_challenge();
            if challenge.is_none() && !error.is_authorization_required() {
                return Ok(false);
            }
            session.authorize(challenge, seen).await?;
            return Ok(true);
        }
        let _ = (error, seen);
        Ok(false)
    }

    /// Keeps the server's process alive as long as this state.
    pub(crate) fn keep_process(&self, child: tokio::process::Child) {
        *self.process.lock().unwrap_or_else(PoisonError::into_inner) = Some(child);
    }

    /// The right to list the tools and keep them, one listing at a time.
    pub(crate) async fn relisting(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.relisting.lock().await
    }

    /// The tools as last listed.
    pub(crate) fn tools(&self) -> Arc<[Tool]> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Keeps a new list. The first list (at connection) is generation 0; each later one adds 1.
    pub(crate) fn set_tools(&self, tools: Vec<Tool>, first: bool) {
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = tools.into();
        if !first {
            self.generation.send_modify(|g| *g += 1);
        }
    }

    /// How many times the list was listed again since the connection.
    pub(crate) fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Waits until the list has been listed again after `generation`.
    pub(crate) async fn listed_after(&self, generation: u64) {
        let mut seen = self.generation.subscribe();
        // The sender lives as long as `self`: the wait cannot fail.
        let _ = seen.wait_for(|g| *g > generation).await;
    }

    /// Sends the progress reports of the request carrying `token` to `ctx`, until the
    /// returned guard is dropped.
    pub(crate) fn route_progress(
        self: &Arc<Self>,
        token: ProgressToken,
        ctx: ToolContext<'static>,
    ) -> ProgressRoute {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), (ctx, None));
        ProgressRoute {
            state: self.clone(),
            token,
        }
    }
}

impl ClientState {
    /// Passes a report on to the context of the call it is for. Notifications are handled
    /// concurrently, so one may come after a later one: a report that does not go beyond
    /// the last passed on is left, as progress only goes up. Passed on under the lock, so in
    /// order.
    fn pass_on_progress(&self, params: &ProgressNotificationParam) {
        let mut routes = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((ctx, last)) = routes.get_mut(&params.progress_token) else {
            return;
        };
        if last.is_some_and(|last| params.progress <= last) {
            return;
        }
        *last = Some(params.progress);
        ctx.progress(params.progress, params.total, params.message.as_deref());
    }
}

/// Routes one call's progress while it lives.
pub(crate) struct ProgressRoute {
    state: Arc<ClientState>,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.state
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

/// The handler of an import's connection.
pub(crate) struct ImportClient(pub(crate) Arc<ClientState>);

impl ClientHandler for ImportClient {
    /// Introduces the import as ai-tool, asking for [`ImportLimits::protocol_version`].
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("ai-tool", env!("CARGO_PKG_VERSION"));
        if let Some(version) = &self.0.limits.protocol_version {
            info.protocol_version = version.clone();
        }
        if self.0.limits.accept_tasks {
            info.capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                    Default::default(),
                );
        }
        #[allow(deprecated)] // sampling: deprecated by SEP-2577, answered in 2025-11-25
        if self.0.limits.forward_sampling {
            info.capabilities.sampling = Some(Default::default());
        }
        if self.0.limits.forward_elicitation {
            let mut elicitation = ElicitationCapability::new();
            elicitation.form = Some(FormElicitationCapability::new());
            info.capabilities.elicitation = Some(elicitation);
        }
        info
    }

    /// A server's question during a call, passed on to that call's caller ([`Questions`]);
    /// an error for the server when there is no one, or no one alone, to ask.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let refused = |message: String| ErrorData::invalid_request(message, None);
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(refused("only form elicitation is passed on".into()));
        };
        let schema = serde_json::to_value(&requested_schema).map_err(|e| refused(e.to_string()))?;
        // The question is the server's words: the user is told whose.
        let message = format!("The MCP server {} asks: {message}", self.0.server);
        // Asked until the server cancels its request (or the connection ends).
        let answer = tokio::select! {
            answer = self.0.questions.ask(&message, schema) => answer.map_err(refused)?,
            () = context.ct.cancelled() => {
                return Err(refused("the request was cancelled".into()));
            }
        };
        Ok(match answer {
            Elicited::Accepted(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            Elicited::Declined => ElicitResult::new(ElicitationAction::Decline),
            Elicited::Cancelled => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    /// A server's request to a model during a call, passed on to that call's caller.
    #[allow(deprecated)] // sampling: deprecated by SEP-2577, answered in 2025-11-25
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, ErrorData> {
        let refused = |message: String| ErrorData::invalid_request(message, None);
        if !self.0.limits.forward_sampling {
            return Err(refused("this client passes no sampling on".into()));
        }
        let request = sampling_request(&params).map_err(refused)?;
        let answer = tokio::select! {
            answer = self.0.questions.sample(request) => answer.map_err(refused)?,
            () = context.ct.cancelled() => {
                return Err(refused("the request was cancelled".into()));
            }
        };
        let mut result = serde_json::json!({
            "role": "assistant",
            "content": { "type": "text", "text": answer.text },
            "model": answer.model,
        });
        if let Some(reason) = answer.stop_reason {
            result["stopReason"] = reason.into();
        }
        serde_json::from_value(result).map_err(|e| refused(e.to_string()))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.pass_on_progress(&params);
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // A change told while another waits is listed by that one.
        if self.0.change_waiting.swap(true, Ordering::AcqRel) {
            return;
        }
        let _one_at_a_time = self.0.relisting().await;
        self.0.change_waiting.store(false, Ordering::Release);
        // Listed again in the background: no authorization is started here (a person may have
        // to take part); a token that expired is refreshed as for any request.
        match list_every_tool(&context.peer, &self.0, false).await {
            Ok(tools) => self.0.set_tools(tools, false),
            Err(e) => tracing::warn!(
                server = %self.0.server,
                error = %e,
                "listing an MCP server's tools again after tools/list_changed failed"
            ),
        }
    }
}

/// How many times an import authorizes (OAuth) for one request before that request's failure
/// is the answer: a server that refuses every token is not asked again and again.
pub const MAX_AUTHORIZATIONS_PER_REQUEST: usize = 3;

/// A server's `sampling/createMessage` as a request to the caller's model: text messages, the
/// system prompt, the token cap. Anything else (images, a request offering tools) is refused.
#[allow(deprecated)] // sampling: deprecated by SEP-2577, answered in 2025-11-25
pub(crate) fn sampling_request(
    params: &rmcp::model::CreateMessageRequestParams,
) -> Result<SamplingRequest, String> {
    if params.tools.as_ref().is_some_and(|tools| !tools.is_empty()) {
        return Err("a sampling request offering tools is not passed on".into());
    }
    let wire = serde_json::to_value(params).map_err(|e| e.to_string())?;
    let mut messages = Vec::new();
    for message in wire["messages"].as_array().into_iter().flatten() {
        let speaker = match message["role"].as_str() {
            Some("assistant") => Speaker::Assistant,
            _ => Speaker::User,
        };
        let blocks = match &message["content"] {
            serde_json::Value::Array(blocks) => blocks.clone(),
            block => vec![block.clone()],
        };
        let mut text = Vec::new();
        for block in &blocks {
            match (block["type"].as_str(), block["text"].as_str()) {
                (Some("text"), Some(t)) => text.push(t.to_owned()),
                _ => return Err("only text messages are passed on to the caller's model".into()),
            }
        }
        messages.push((speaker, text.join("\n")));
    }
    if messages.is_empty() {
        return Err("a sampling request without messages".into());
    }
    Ok(SamplingRequest {
        messages,
        system: params.system_prompt.clone(),
        max_tokens: params.max_tokens,
    })
}

/// The most pages one listing takes, and how long it may take: a server that pages on for ever
/// is refused rather than followed.
const MOST_PAGES: usize = 10_000;
const LISTING_TIMEOUT: Duration = Duration::from_secs(120);

/// Every tool the server lists, page after page, within [`MOST_PAGES`], [`LISTING_TIMEOUT`] and
/// the limits' count and bytes; a cursor given twice is refused, since following it would
/// loop. Descriptions past the limits' length are cut, with a warning naming the tool.
pub(crate) async fn list_every_tool(
    peer: &Peer<RoleClient>,
    state: &ClientState,
    authorize: bool,
) -> Result<Vec<Tool>, String> {
    let (limits, server) = (&state.limits, &*state.server);
    let listing = async {
        let mut tools = Vec::new();
        let mut bytes = 0usize;
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MOST_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            // A page refused for want of authorization is asked for again once authorized
            // (when the import authorizes, and `authorize` says it may now).
            let mut attempts = 0;
            let page = loop {
                let seen = state.authorization();
                match peer.list_tools(params.clone()).await {
                    Ok(page) => break page,
                    Err(e) if authorize && attempts < MAX_AUTHORIZATIONS_PER_REQUEST => {
                        attempts += 1;
                        if !state.authorized_again(&e, seen).await? {
                            return Err(e.to_string());
                        }
                    }
                    Err(e) => return Err(e.to_string()),
                }
            };
            for mut tool in page.tools {
                bytes = bytes.saturating_add(serde_json::to_vec(&tool).map_or(0, |t| t.len()));
                cut_description(&mut tool, limits.max_description_bytes, server);
                tools.push(tool);
            }
            if tools.len() > limits.max_tools {
                return Err(format!(
                    "the server lists more than {} tools (ImportLimits::max_tools)",
                    limits.max_tools
                ));
            }
            if bytes > limits.max_list_bytes {
                return Err(format!(
                    "the server's tool list has more than {} bytes (ImportLimits::max_list_bytes)",
                    limits.max_list_bytes
                ));
            }
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) if !cursors.insert(next.clone()) => {
                    let shown: String = next.chars().take(40).collect();
                    return Err(format!("the server gave the cursor `{shown}` twice"));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(format!("the server's list runs past {MOST_PAGES} pages"))
    };
    tokio::time::timeout(LISTING_TIMEOUT, listing)
        .await
        .map_err(|_| format!("listing the tools took more than {LISTING_TIMEOUT:?}"))?
}

/// Cuts a description longer than `max` bytes at a character boundary, marking the cut, and
/// warns naming the tool.
fn cut_description(tool: &mut Tool, max: usize, server: &str) {
    let Some(description) = tool.description.as_deref() else {
        return;
    };
    if let Some(cut) = cut_text(description, max) {
        tracing::warn!(
            server,
            tool = %tool.name,
            bytes = description.len(),
            "an imported tool's description is longer than {max} bytes \
             (ImportLimits::max_description_bytes): cut"
        );
        tool.description = Some(cut.into());
    }
}

/// `text` cut at `max` bytes (at a character boundary) with the cut marked; `None` when it
/// fits.
pub(crate) fn cut_text(text: &str, max: usize) -> Option<String> {
    if text.len() <= max {
        return None;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!("{} [description cut at {max} bytes]", &text[..end]))
}

/// What an import takes from a server, each with a default: the server is untrusted, and a
/// gateway passes its list on to models and clients.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportLimits {
    /// How long a call may run when its tool has no time limit of its own: then it is
    /// cancelled (`notifications/cancelled`) and fails with `ToolError::Timeout`. Default
    /// 60 s.
    pub call_timeout: Duration,
    /// The most tools a list may have. Default 100,000.
    pub max_tools: usize,
    /// The most bytes a whole list may have, as JSON. Default 32 MiB.
    pub max_list_bytes: usize,
    /// The most bytes kept of one tool's description; a longer one is cut there and marked
    /// (`[description cut at N bytes]` follows), with a warning naming
    /// the tool. Default 8 KiB.
    pub max_description_bytes: usize,
    /// The protocol version asked for in `initialize`; `None`, the default, asks for the
    /// newest rmcp speaks (2026-07-28, which a server answers over `initialize` with the newest
    /// it has that keeps the handshake, 2025-11-25 today). A server may answer with an older
    /// one, which is then spoken. Ask for `ProtocolVersion::V_2025_11_25` to meet a server or
    /// a suite that expects to be asked for it.
    pub protocol_version: Option<ProtocolVersion>,
    /// Whether the import declares `elicitation` and passes a server's questions during a
    /// call on to that call's caller (`ToolContext::elicit`), when that caller can answer
    /// and no other such call is in flight on the connection (MCP names no call in a
    /// question). Default false: the server is told the import cannot answer.
    pub forward_elicitation: bool,
    /// Whether the import takes tasks (the tasks extension of protocol 2026-07-28): it
    /// connects with `server/discover`, asking for 2026-07-28 (and falls back to
    /// `initialize` with a server that does not know it), declares the extension, and waits on
    /// a call the server runs as a task, polling it, under the call's time limit and
    /// cancellation (`tasks/cancel` when the caller stops waiting). Default false.
    pub accept_tasks: bool,
    /// Whether the import declares `sampling` and passes a server's requests to a model during
    /// a call on to that call's caller (`ToolContext::sample`: in an agent's run, the run's own
    /// model when the agent answers sampling), under the same rule as questions (one call in
    /// flight, whose caller can answer). Text messages only; a request offering tools is
    /// refused. Default false.
    pub forward_sampling: bool,
}

impl ImportLimits {
    /// The default of [`ImportLimits::call_timeout`].
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
    /// The default of [`ImportLimits::max_tools`].
    pub const DEFAULT_MAX_TOOLS: usize = 100_000;
    /// The default of [`ImportLimits::max_list_bytes`].
    pub const DEFAULT_MAX_LIST_BYTES: usize = 32 << 20;
    /// The default of [`ImportLimits::max_description_bytes`].
    pub const DEFAULT_MAX_DESCRIPTION_BYTES: usize = 8 << 10;

    /// These limits with another call timeout.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// These limits with another cap on the tools listed.
    pub fn with_max_tools(mut self, max: usize) -> Self {
        self.max_tools = max;
        self
    }

    /// These limits with another cap on a list's bytes.
    pub fn with_max_list_bytes(mut self, max: usize) -> Self {
        self.max_list_bytes = max;
        self
    }

    /// These limits with another cap on a description's bytes.
    pub fn with_max_description_bytes(mut self, max: usize) -> Self {
        self.max_description_bytes = max;
        self
    }

    /// These options passing a server's questions on to the caller
    /// ([`ImportLimits::forward_elicitation`]).
    pub fn with_forwarded_elicitation(mut self) -> Self {
        self.forward_elicitation = true;
        self
    }

    /// These options passing a server's requests to a model on to the caller
    /// ([`ImportLimits::forward_sampling`]).
    pub fn with_forwarded_sampling(mut self) -> Self {
        self.forward_sampling = true;
        self
    }

    /// These options taking tasks ([`ImportLimits::accept_tasks`]).
    pub fn with_tasks(mut self) -> Self {
        self.accept_tasks = true;
        self
    }

    /// These options asking for another protocol version in `initialize`.
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = Some(version);
        self
    }
}

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits {
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            max_tools: Self::DEFAULT_MAX_TOOLS,
            max_list_bytes: Self::DEFAULT_MAX_LIST_BYTES,
            max_description_bytes: Self::DEFAULT_MAX_DESCRIPTION_BYTES,
            protocol_version: None,
            forward_elicitation: false,
            accept_tasks: false,
            forward_sampling: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use serde_json::json;
    use tool_core::ToolOutput;
    use tool_runtime::{CallOptions, DynamicTool, Executor, Progress, ProgressSink};

    /// A call's context that keeps the progress it is given.
    async fn context_keeping_progress() -> (ToolContext<'static>, Arc<Mutex<Vec<f64>>>) {
        let (sent, kept) = std::sync::mpsc::channel();
        let tool = DynamicTool::new(
            "t",
            "Keeps its context",
            json!({ "type": "object" }),
            move |_, ctx| {
                let _ = sent.send(ctx);
                async { Ok(ToolOutput::empty()) }
            },
        );
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(tool)
            .build()
            .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink: ProgressSink = {
            let seen = seen.clone();
            Arc::new(move |p: Progress<'_>| seen.lock().unwrap().push(p.done))
        };
        let options = CallOptions::default().with_progress(sink);
        exec.execute_with("t", json!({}), &options).await.unwrap();
        (kept.recv().unwrap(), seen)
    }

    /// Found by the `mcp_import` fuzz target: a tool without a description had one made from
    /// its name, past the cap.
    #[test]
    fn a_cut_text_keeps_the_cap_then_its_mark_and_whole_characters() {
        assert_eq!(cut_text("short", 8), None);
        let cut = cut_text(&"é".repeat(100), 15).unwrap();
        assert!(cut.starts_with(&"é".repeat(7)), "{cut}");
        assert!(cut.ends_with("[description cut at 15 bytes]"), "{cut}");
    }

    #[tokio::test]
    async fn progress_is_passed_on_only_going_up_and_only_while_routed() {
        let (ctx, seen) = context_keeping_progress().await;
        let state = Arc::new(ClientState::new("s".into(), ImportLimits::default()));
        let token = ProgressToken(NumberOrString::Number(7));
        let report = |done: f64| ProgressNotificationParam::new(token.clone(), done);
        let route = state.route_progress(token.clone(), ctx);
        for done in [1.0, 3.0, 2.0, 3.0, 4.0] {
            state.pass_on_progress(&report(done));
        }
        drop(route);
        state.pass_on_progress(&report(5.0));
        assert_eq!(*seen.lock().unwrap(), [1.0, 3.0, 4.0]);
    }
}
