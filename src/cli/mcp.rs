//! The command line's MCP parts (feature `mcp`): `serve`, and the `--mcp-stdio` / `--mcp-http`
//! sources whose tools join the compiled-in ones.

use std::io::Write;
use std::net::SocketAddr;

use crate::mcp::{serve_http_with, serve_stdio_with, HttpOptions, McpServer, McpTools};
use crate::ExecutorBuilder;

use super::Failure;

/// MCP servers whose tools join the others, each named `SERVER.TOOL`.
#[derive(clap::Args, Default)]
pub(crate) struct Sources {
    /// An MCP server to start, as "COMMAND ARGS" (split at white space; no quoting);
    /// repeatable.
    #[arg(long = "mcp-stdio", value_name = "COMMAND")]
    stdio: Vec<String>,
    /// A Streamable HTTP MCP server's URL, such as http://127.0.0.1:8000/mcp; repeatable.
    #[arg(long = "mcp-http", value_name = "URL")]
    http: Vec<String>,
    /// A header sent to every HTTP MCP server, as 'NAME: VALUE' (such as
    /// 'Authorization: Bearer TOKEN'); repeatable.
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    headers: Vec<String>,
}

impl Sources {
    /// Sources from `--upstream` values, `stdio:COMMAND ARGS` or `http:URL`, with the
    /// `--header` values for the HTTP ones.
    pub(crate) fn from_upstreams(
        upstreams: &[String],
        headers: &[String],
    ) -> Result<Self, Failure> {
        let mut sources = Sources {
            headers: headers.to_vec(),
            ..Sources::default()
        };
        for upstream in upstreams {
            if let Some(command) = upstream.strip_prefix("stdio:") {
                sources.stdio.push(command.to_owned());
            } else if let Some(url) = upstream.strip_prefix("http:") {
                sources.http.push(url.to_owned());
            } else {
                return Err(Failure::input(format!(
                    "--upstream `{upstream}`: expected `stdio:COMMAND ARGS` or `http:URL`"
                )));
            }
        }
        Ok(sources)
    }

    /// Connects to every source and adds its tools to the builder.
    pub(crate) async fn add_to(
        &self,
        builder: ExecutorBuilder,
    ) -> Result<ExecutorBuilder, Failure> {
        let imports = self.connect().await?;
        Ok(imports
            .iter()
            .fold(builder, |builder, tools| builder.tools(tools.tools())))
    }

    /// Connects to every source.
    pub(crate) async fn connect(&self) -> Result<Vec<McpTools>, Failure> {
        let mut imports = Vec::new();
        for line in &self.stdio {
            let mut words = line.split_whitespace();
            let program = words
                .next()
                .ok_or_else(|| Failure::input("--mcp-stdio: the command is empty"))?;
            let mut command = tokio::process::Command::new(program);
            command.args(words);
            let tools = McpTools::connect_stdio(command)
                .await
                .map_err(|e| Failure::input(format!("--mcp-stdio `{line}`: {e}")))?;
            imports.push(tools);
        }
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        for url in &self.http {
            let tools = McpTools::connect_http_with_headers(url, &headers)
                .await
                .map_err(|e| Failure::input(format!("--mcp-http `{url}`: {e}")))?;
            imports.push(tools);
        }
        Ok(imports)
    }
}

/// `NAME: VALUE` as the name and the value, trimmed.
fn parse_header(header: &str) -> Result<(&str, &str), Failure> {
    match header.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim(), value.trim())),
        _ => Err(Failure::input(format!(
            "--header `{header}`: expected 'NAME: VALUE'"
        ))),
    }
}

/// Where `serve` serves.
pub(crate) struct Serve {
    pub stdio: bool,
    pub http: Option<SocketAddr>,
    pub token_env: Option<String>,
    /// `Host` values accepted besides loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Offer `search_tools` and the tools found rather than every tool.
    pub search: bool,
}

/// Serves the executor's tools and the upstream servers' (following their lists) until the
/// client goes (stdio) or the process ends (HTTP).
pub(crate) async fn serve(
    exec: crate::Executor,
    upstreams: Vec<McpTools>,
    how: Serve,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let mut server = McpServer::new(exec).map_err(|e| Failure::input(e.to_string()))?;
    if !upstreams.is_empty() {
        server = server
            .following(upstreams)
            .map_err(|e| Failure::input(format!("--upstream: {e}")))?;
    }
    if how.search {
        server = server
            .with_search()
            .map_err(|e| Failure::input(format!("--search: {e}")))?;
    }
    let failed = |e: crate::mcp::McpError| Failure {
        code: 1,
        message: e.to_string(),
    };
    match (how.stdio, how.http) {
        (true, None) => serve_stdio_with(server).await.map_err(failed),
        (false, Some(addr)) => {
            let mut options = HttpOptions::default().bound_to(addr);
            for host in &how.allowed_hosts {
                options = options.with_allowed_host(host.clone());
            }
            if let Some(var) = &how.token_env {
                let token = std::env::var(var).map_err(|_| {
                    Failure::input(format!("--token-env {var}: the variable is not set"))
                })?;
                if token.is_empty() {
                    return Err(Failure::input(format!(
                        "--token-env {var}: the variable is empty"
                    )));
                }
                options = options.with_bearer_token(token);
            }
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Failure::input(format!("--http {addr}: {e}")))?;
            let bound = listener
                .local_addr()
                .map_err(|e| Failure::input(format!("--http {addr}: {e}")))?;
            let _ = writeln!(err, "serving MCP on http://{bound}/mcp");
            let _ = err.flush();
            serve_http_with(server, listener, options)
                .await
                .map_err(failed)
        }
        _ => Err(Failure::input("serve needs one of --stdio and --http ADDR")),
    }
}
