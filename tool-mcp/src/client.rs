//! [`ImportClient`]: the client side of an import. It keeps the server's tool list, listed
//! again on `notifications/tools/list_changed`, and routes `notifications/progress` to the
//! context of the call that asked for them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Tool};
use rmcp::service::{NotificationContext, Peer, RoleClient};
use rmcp::ClientHandler;
use tokio::sync::watch;
use tool_runtime::ToolContext;

/// What the client and every tool made from it share.
pub(crate) struct ClientState {
    /// The server, as the user named it.
    pub(crate) server: Arc<str>,
    /// The server's tools, as last listed.
    tools: RwLock<Arc<[Tool]>>,
    /// How many times the list was listed again; the tools are listed once at connection.
    generation: watch::Sender<u64>,
    /// The calls in flight that want progress, by the token their request carries.
    progress: Mutex<HashMap<ProgressToken, ToolContext<'static>>>,
    /// Held while the tools are listed again and kept, so that of two changes in a row the
    /// later list is the one kept.
    relisting: tokio::sync::Mutex<()>,
}

impl ClientState {
    pub(crate) fn new(server: Arc<str>) -> Self {
        ClientState {
            server,
            tools: RwLock::new(Arc::from(Vec::new())),
            generation: watch::Sender::new(0),
            progress: Mutex::default(),
            relisting: tokio::sync::Mutex::new(()),
        }
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
            .insert(token.clone(), ctx);
        ProgressRoute {
            state: self.clone(),
            token,
        }
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
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let ctx = self
            .0
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        if let Some(ctx) = ctx {
            ctx.progress(params.progress, params.total, params.message.as_deref());
        }
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let _one_at_a_time = self.0.relisting.lock().await;
        match list_every_tool(&context.peer).await {
            Ok(tools) => self.0.set_tools(tools, false),
            Err(e) => tracing::warn!(
                server = %self.0.server,
                error = %e,
                "listing an MCP server's tools again after tools/list_changed failed"
            ),
        }
    }
}

/// The most pages and tools one listing takes, and how long it may take: a server that pages
/// on for ever is refused rather than followed.
const MOST_PAGES: usize = 10_000;
const MOST_TOOLS: usize = 100_000;
const LISTING_TIMEOUT: Duration = Duration::from_secs(120);

/// Every tool the server lists, page after page, within [`MOST_PAGES`], [`MOST_TOOLS`] and
/// [`LISTING_TIMEOUT`]; a cursor given twice is refused, since following it would loop.
pub(crate) async fn list_every_tool(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, String> {
    let listing = async {
        let mut tools = Vec::new();
        let mut cursors = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MOST_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = peer.list_tools(params).await.map_err(|e| e.to_string())?;
            tools.extend(page.tools);
            if tools.len() > MOST_TOOLS {
                return Err(format!("the server lists more than {MOST_TOOLS} tools"));
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
