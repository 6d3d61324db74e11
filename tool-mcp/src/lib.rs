//! Model Context Protocol for `ai-tool`, on the official Rust SDK (`rmcp`).
//!
//! - Serve: [`serve_stdio`] and [`serve_http`] make every tool of an [`Executor`] an MCP tool
//!   (`tools/list` built once, `tools/call` validated by the executor, `notifications/cancelled`
//!   cancelling the call). [`McpServer`] is the `ServerHandler`, for other transports;
//!   [`McpServer::following`] serves imported servers' tools beside the executor's and follows
//!   their lists (a gateway).
//! - Import: [`McpTools`] lists an MCP server's tools and makes each a dynamic tool of an
//!   executor under a namespace (`server.tool`), validated locally and forwarded, with the
//!   server's progress; [`RefreshingExecutor`] follows a server whose list changes.
//!
//! Users normally reach this crate as `ai_tool::mcp` (facade feature `mcp`).
//!
//! [`Executor`]: tool_runtime::Executor

#![warn(missing_docs)]

mod awaited;
mod client;
mod connections;
mod convert;
mod elicit;
mod error;
mod frames;
mod http_options;
mod import;
mod listing;
#[cfg(feature = "oauth")]
mod loopback;
mod notify;
#[cfg(feature = "oauth")]
mod oauth;
mod questions;
mod refreshing;
mod remote;
mod rounds;
mod sample;
mod search;
mod serve;
mod server;
mod tasks;
#[cfg(feature = "oauth")]
mod token_file;
mod trace_context;
mod urls;

pub use client::{ImportLimits, MAX_AUTHORIZATIONS_PER_REQUEST};
pub use convert::MAX_IMPORTED_ICONS;
pub use error::McpError;
pub use http_options::{HttpLimits, HttpOptions};
pub use import::{McpBuilderExt, McpTools, HANDSHAKE_TIMEOUT};
#[cfg(feature = "oauth")]
pub use loopback::{LoopbackRedirect, LOOPBACK_WAIT, MAX_CALLBACK_REQUEST_BYTES};
#[cfg(feature = "oauth")]
pub use oauth::{AuthorizeFuture, Authorizer, FollowRedirect, OAuthOptions};
pub use refreshing::RefreshingExecutor;
pub use search::SEARCH_TOOL;
pub use serve::{axum_router, serve_http, serve_http_with, serve_stdio, serve_stdio_with};
pub use server::{CallLimits, McpServer, TOOLS_PER_PAGE};
pub use tasks::TaskLimits;
#[cfg(feature = "oauth")]
pub use token_file::{TokenFile, MAX_TOKEN_FILE_BYTES};

/// The rmcp crate this one is built on, for transports and types not wrapped here.
pub use rmcp;
