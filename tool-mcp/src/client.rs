//! [`ImportClient`]: the client side of an import. It keeps the server's tool list, listed
//! again on `notifications/tools/list_changed`, and routes `notifications/progress` to the
//! context of the call that asked for them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rmcp::model::{ProgressNotificationParam, ProgressToken, Tool};
use rmcp::service::{NotificationContext, RoleClient};
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
}

impl ClientState {
    pub(crate) fn new(server: Arc<str>) -> Self {
        ClientState {
            server,
            tools: RwLock::new(Arc::from(Vec::new())),
            generation: watch::Sender::new(0),
            progress: Mutex::default(),
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
        match context.peer.list_all_tools().await {
            Ok(tools) => self.0.set_tools(tools, false),
            Err(e) => tracing::warn!(
                server = %self.0.server,
                error = %e,
                "listing an MCP server's tools again after tools/list_changed failed"
            ),
        }
    }
}
