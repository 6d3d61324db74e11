//! The command line's MCP parts (feature `mcp`): `serve`, and the `--mcp-stdio` / `--mcp-http`
//! sources whose tools join the compiled-in ones.

use std::io::Write;
use std::net::SocketAddr;

use std::time::Duration;

use crate::mcp::{
    serve_http_with, serve_stdio_with, CallLimits, HttpLimits, HttpOptions, ImportLimits,
    McpServer, McpTools, HANDSHAKE_TIMEOUT,
};
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
    /// Authorize with each `--mcp-http` server by OAuth when it asks: the authorization URL is
    /// printed to open in a browser, the redirect is taken on 127.0.0.1, and the tokens are
    /// kept in the user's configuration directory (ai-tool/oauth, mode 0600) for the next run.
    #[cfg(feature = "mcp-oauth")]
    #[arg(long = "oauth")]
    oauth: bool,
    /// How long a call of an MCP server's tool may run before it is cancelled (default 60).
    #[arg(long = "timeout", value_name = "SECONDS", value_parser = super::parse_seconds)]
    timeout: Option<Duration>,
    /// The namespace each `stdio` source takes instead of its server's name (`--upstream
    /// NAME=stdio:..`), by position.
    #[arg(skip)]
    stdio_names: Vec<Option<String>>,
    /// The same for the `http` sources.
    #[arg(skip)]
    http_names: Vec<Option<String>>,
}

impl Sources {
    /// Sources from `--upstream` values, `stdio:COMMAND ARGS` or `http:URL`, each optionally
    /// after `NAME=` (the namespace of its tools instead of the server's name), with the
    /// `--header` values for the HTTP ones.
    pub(crate) fn from_upstreams(
        upstreams: &[String],
        headers: &[String],
        timeout: Option<Duration>,
    ) -> Result<Self, Failure> {
        let mut sources = Sources {
            headers: headers.to_vec(),
            timeout,
            ..Sources::default()
        };
        for upstream in upstreams {
            let (name, source) = named(upstream);
            let name = name.map(str::to_owned);
            if let Some(command) = source.strip_prefix("stdio:") {
                sources.stdio.push(command.to_owned());
                sources.stdio_names.push(name);
            } else if let Some(url) = source.strip_prefix("http:") {
                sources.http.push(url.to_owned());
                sources.http_names.push(name);
            } else {
                return Err(Failure::input(format!(
                    "--upstream `{upstream}`: expected `stdio:COMMAND ARGS` or `http:URL`, \
                     either one after `NAME=` to name its tools `NAME.TOOL`"
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
        let limits = match self.timeout {
            Some(timeout) => ImportLimits::default().with_call_timeout(timeout),
            None => ImportLimits::default(),
        };
        for (at, line) in self.stdio.iter().enumerate() {
            let mut words = line.split_whitespace();
            let program = words
                .next()
                .ok_or_else(|| Failure::input("--mcp-stdio: the command is empty"))?;
            let mut command = tokio::process::Command::new(program);
            command.args(words);
            let tools = McpTools::connect_stdio_with(command, HANDSHAKE_TIMEOUT, limits.clone())
                .await
                .map_err(|e| Failure::input(format!("--mcp-stdio `{line}`: {e}")))?;
            imports.push(renamed(tools, self.stdio_names.get(at)));
        }
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        for (at, url) in self.http.iter().enumerate() {
            #[cfg(feature = "mcp-oauth")]
            if self.oauth {
                if !headers.is_empty() {
                    return Err(Failure::input(
                        "--oauth and --header: an OAuth import sends its own Authorization; \
                         give one or the other",
                    ));
                }
                let tools = oauth::connect(url, limits.clone()).await?;
                imports.push(renamed(tools, self.http_names.get(at)));
                continue;
            }
            let tools = McpTools::connect_http_with(url, &headers, limits.clone())
                .await
                // The error names the server by its URL without credentials or query.
                .map_err(|e| Failure::input(format!("--mcp-http: {e}")))?;
            imports.push(renamed(tools, self.http_names.get(at)));
        }
        Ok(imports)
    }
}

/// An `--upstream` value as its namespace, when it starts with `NAME=`, and its source. A value
/// that starts with its source is not split, whatever `=` its command or URL holds.
fn named(upstream: &str) -> (Option<&str>, &str) {
    if upstream.starts_with("stdio:") || upstream.starts_with("http:") {
        return (None, upstream);
    }
    match upstream.split_once('=') {
        Some((name, source))
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
        {
            (Some(name), source)
        }
        _ => (None, upstream),
    }
}

/// The tools under the namespace given on the command line, if one was.
fn renamed(tools: McpTools, name: Option<&Option<String>>) -> McpTools {
    match name {
        Some(Some(name)) => tools.with_namespace(name.clone()),
        _ => tools,
    }
}

/// `NAME: VALUE` as the name and the value, trimmed.
fn parse_header(header: &str) -> Result<(&str, &str), Failure> {
    match header.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim(), value.trim())),
        // What was given may be a secret: it is not shown.
        _ => Err(Failure::input(
            "--header: expected 'NAME: VALUE' (what was given is not shown: it may be a secret)",
        )),
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
    /// Serve beyond loopback without a token (a proxy in front authenticates).
    pub no_auth: bool,
    /// What clients may hold.
    pub limits: HttpLimits,
    /// How many calls run at once.
    pub calls: CallLimits,
    /// Bytes of one result sent, when not the default.
    pub max_result_bytes: Option<usize>,
}

/// Serves the executor's tools and the upstream servers' (following their lists) until the
/// client goes (stdio) or the process ends (HTTP).
pub(crate) async fn serve(
    exec: crate::Executor,
    upstreams: Vec<McpTools>,
    how: Serve,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let mut server = McpServer::new(exec)
        .map_err(|e| Failure::input(e.to_string()))?
        .with_call_limits(how.calls);
    if let Some(bytes) = how.max_result_bytes {
        server = server.with_max_result_bytes(bytes);
    }
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
            let mut options = HttpOptions::default()
                .bound_to(addr)
                .with_limits(how.limits.clone());
            if how.no_auth {
                options = options.allow_unauthenticated();
            }
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
            // Refused before anything is bound: serving every tool to other machines needs a
            // token, or `--no-auth` said aloud.
            if !addr.ip().to_canonical().is_loopback() && how.token_env.is_none() && !how.no_auth {
                return Err(Failure::input(
                    crate::mcp::McpError::Unauthenticated { addr }.to_string(),
                ));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(upstreams: &[&str]) -> Result<Sources, Failure> {
        let upstreams: Vec<String> = upstreams.iter().map(|u| (*u).to_owned()).collect();
        Sources::from_upstreams(&upstreams, &[], None)
    }

    #[test]
    fn an_upstream_may_be_named_and_keeps_the_equals_signs_of_its_source() {
        let got = sources(&[
            "shop2=stdio:python server.py --mode=a",
            "stdio:python server.py --mode=b",
            "api=http:http://127.0.0.1:8000/mcp?key=v",
            "http:http://127.0.0.1:9000/mcp?key=w",
        ])
        .unwrap_or_else(|_| panic!("the upstreams parse"));
        assert_eq!(
            got.stdio,
            ["python server.py --mode=a", "python server.py --mode=b"]
        );
        assert_eq!(got.stdio_names, [Some("shop2".to_owned()), None]);
        assert_eq!(
            got.http,
            [
                "http://127.0.0.1:8000/mcp?key=v",
                "http://127.0.0.1:9000/mcp?key=w"
            ]
        );
        assert_eq!(got.http_names, [Some("api".to_owned()), None]);
    }

    #[test]
    fn an_upstream_without_a_source_is_refused_naming_the_forms() {
        for bad in ["shop=ftp:x", "a b=stdio:x", "=stdio:x", "server.py"] {
            let Err(failure) = sources(&[bad]) else {
                panic!("`{bad}` was taken");
            };
            let text = failure.message;
            assert!(
                text.contains(bad) && text.contains("NAME="),
                "{bad}: {text}"
            );
        }
    }
}

/// `--oauth`: a person authorizes in a browser, the tokens are kept for the next run.
#[cfg(feature = "mcp-oauth")]
mod oauth {
    use std::path::PathBuf;

    use crate::mcp::{ImportLimits, LoopbackRedirect, McpTools, OAuthOptions, TokenFile};

    use super::Failure;

    /// Connects to the server at `url`, authorizing when it asks.
    pub(super) async fn connect(url: &str, limits: ImportLimits) -> Result<McpTools, Failure> {
        let dir = tokens_dir().ok_or_else(|| {
            Failure::input(
                "--oauth: no configuration directory to keep tokens in (set XDG_CONFIG_HOME \
                 or HOME)",
            )
        })?;
        let show = |url: &str| {
            eprintln!("To authorize ai-tool, open this URL in a browser:\n{url}");
        };
        let authorizer = LoopbackRedirect::bind(show)
            .await
            .map_err(|e| Failure::input(format!("--oauth: listening on 127.0.0.1: {e}")))?;
        let options = OAuthOptions::new(authorizer)
            .with_client_name("ai-tool command line")
            .with_token_file(TokenFile::for_server(&dir, url));
        McpTools::connect_http_oauth(url, options, limits)
            .await
            .map_err(|e| Failure::input(format!("--mcp-http --oauth: {e}")))
    }

    /// Where tokens are kept: `ai-tool/oauth` in the user's configuration directory
    /// (`$XDG_CONFIG_HOME`, else `$HOME/.config`; `%APPDATA%` on Windows).
    fn tokens_dir() -> Option<PathBuf> {
        let absolute = |var: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let config = absolute("XDG_CONFIG_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".config")))
            .or_else(|| absolute("APPDATA"))?;
        Some(config.join("ai-tool").join("oauth"))
    }
}
