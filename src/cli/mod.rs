//! The `ai-tool` command line, also callable from your own binary so that your compiled-in tools
//! get the same commands:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     // Your services, providers and tools, as for any executor; not built yet, so that
//!     // catalogs given on the command line join the same registry.
//!     let tools = ai_tool::Executor::builder();
//!     ai_tool::cli::run(tools)
//! }
//! ```
//!
//! It is behind the facade's `cli` feature (on for the `ai-tool` binary), so that a library
//! user does not compile clap.
//!
//! Commands: `tools [--catalog F] [--json] [--format API [--strict]]`, `call NAME ARGS_JSON`,
//! `validate [--catalog F] --calls F`, `parse-calls --format API [--strict] RESPONSE.json`,
//! `run-calls --format API [--strict] RESPONSE.json`, `retrieve [--retriever bm25|dense|hybrid] "query"`,
//! `eval-retrieval --catalog F --queries F [--retriever ..] [--k N] [--json]`; with the `mcp`
//! feature, `serve --stdio | --http ADDR [--token-env VAR] [--allowed-host HOST ..] [--upstream [NAME=]stdio:CMD|[NAME=]http:URL ..]
//! [--header 'K: V' ..] [--search]`, and `--mcp-stdio "CMD ARGS"` / `--mcp-http URL
//! [--header 'K: V' ..]` on `tools`, `call` and `chat`; with the `agent` feature, `chat
//! [--model API:MODEL] "question"` (the agent loop; its exit codes are its own, see
//! `docs/cli.md`), `route --tools FILE [--type T] [--json] "query"` and `tools --tools FILE`
//! for declared tools (NLWeb's `tools.xml`).
//!
//! Exit codes: `0` success (for `validate`, whatever the verdicts); `1` the called tool failed
//! (its error, panic or time limit); `2` unusable input (a missing file, a malformed line, an
//! unknown tool, invalid arguments, a tool that is only declared, bad flags). Every error
//! is one line on standard error naming what and where.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[cfg(feature = "agent")]
mod chat;
#[cfg(feature = "mcp")]
mod mcp;
mod retrieve;
#[cfg(feature = "agent")]
mod route;
use serde_json::{json, Value};

use crate::provider::{self, DeclareOptions, Format};
use crate::{Executor, ExecutorBuilder, ToolCall, ToolError, ToolSpec};

#[derive(Parser)]
#[command(
    name = "ai-tool",
    version,
    about = "List, call and validate tools of ai-tool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the tools: names and descriptions, or the full specs as JSON.
    Tools {
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Print the full specs as a JSON array.
        #[arg(long)]
        json: bool,
        /// Print the declarations array for this API: openai-chat, openai-responses, anthropic,
        /// gemini, bedrock or mcp.
        #[arg(long, value_parser = parse_format)]
        format: Option<Format>,
        /// With --format: declare in strict mode where the API has one.
        #[arg(long, requires = "format")]
        strict: bool,
        #[cfg(feature = "mcp")]
        #[command(flatten)]
        mcp: mcp::Sources,
        /// List the tools a tools file (tools.xml, .toml or .json) declares instead.
        #[cfg(feature = "agent")]
        #[arg(long = "tools", value_name = "FILE", conflicts_with_all = ["catalog", "format"])]
        declared: Option<PathBuf>,
    },
    /// Route a query to one declared tool: score every candidate with the model of
    /// OPENAI_BASE_URL (OPENAI_API_KEY, AI_TOOL_MODEL) and print the scores; runs nothing.
    #[cfg(feature = "agent")]
    Route {
        /// The user's query.
        query: String,
        /// The tools file: NLWeb's tools.xml, or the same as .toml or .json.
        #[arg(long = "tools", value_name = "FILE")]
        declared: PathBuf,
        /// The query's schema.org type.
        #[arg(long = "type", default_value = "Thing")]
        schema_type: String,
        /// The site the query is for, when the file declares tools for several `<Site>`s.
        #[arg(long)]
        site: Option<String>,
        /// The lowest score a tool is chosen with (default 75).
        #[arg(long)]
        threshold: Option<u8>,
        /// The tool that takes the query when nothing reaches the threshold.
        #[arg(long)]
        fallback: Option<String>,
        /// Print one JSON object: {"tool","score","params","candidates":[{"tool","score","error"}]}.
        #[arg(long)]
        json: bool,
    },
    /// Print the tool calls in a model's response as neutral JSON lines.
    ParseCalls {
        /// The API the response is from.
        #[arg(long, value_parser = parse_format)]
        format: Format,
        /// The tools were declared with --strict: decode what strict declarations encode.
        #[arg(long)]
        strict: bool,
        /// The response, as the API returned it.
        response: PathBuf,
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
    },
    /// Rank the tools for a user's message.
    Retrieve {
        /// The user's message; `[tool_name]` in it forces that tool in.
        query: String,
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// How to rank.
        #[arg(long, value_enum, default_value = "bm25")]
        retriever: retrieve::Kind,
        /// How many ranked tools to print.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// The embedding model's directory (model.safetensors, tokenizer.json, config.json).
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// Measure retrieval on labelled queries: hit@1, hit@5, hit@10, MRR, latency.
    EvalRetrieval {
        /// The tools, as a JSON Lines catalog.
        #[arg(long)]
        catalog: PathBuf,
        /// The queries, each `{"query": "..", "tools": [gold names]}`.
        #[arg(long)]
        queries: PathBuf,
        /// How to rank.
        #[arg(long, value_enum, default_value = "bm25")]
        retriever: retrieve::Kind,
        /// How many ranked tools to look at (hit@10 and MRR always look at 10 or more).
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Evaluate an evenly spread sample of this many queries.
        #[arg(long)]
        limit: Option<usize>,
        /// For the hybrid retriever: `rrf`, `rrf:K`, or `blend:W` (W the lexical weight).
        #[arg(long, value_parser = retrieve::parse_fusion)]
        fusion: Option<crate::retrieval::Fusion>,
        /// The embedding model's directory.
        #[arg(long)]
        model: Option<PathBuf>,
        /// Print the scores as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Execute the tool calls in a model's response and print the result message(s).
    RunCalls {
        /// The API the response is from.
        #[arg(long, value_parser = parse_format)]
        format: Format,
        /// The tools were declared with --strict: decode what strict declarations encode.
        #[arg(long)]
        strict: bool,
        /// The response, as the API returned it.
        response: PathBuf,
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
    },
    /// Execute one tool and print its output.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, as a JSON object.
        args: String,
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
        #[cfg(feature = "mcp")]
        #[command(flatten)]
        mcp: mcp::Sources,
    },
    /// Serve the tools over MCP: on standard input and output, or Streamable HTTP at
    /// http://ADDR/mcp. With --upstream, the tools of other MCP servers too (a gateway).
    #[cfg(feature = "mcp")]
    Serve {
        /// Serve on standard input and output.
        #[arg(long, conflicts_with = "http", required_unless_present = "http")]
        stdio: bool,
        /// Serve Streamable HTTP on this address, such as 127.0.0.1:8765.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// With --http: require `Authorization: Bearer` with the token in this variable.
        /// Needed to serve on an address other than loopback, unless --no-auth.
        #[arg(long, value_name = "VAR", requires = "http")]
        token_env: Option<String>,
        /// With --http on an address other than loopback: serve without a token, because a
        /// proxy in front authenticates every request. Without it (or --token-env) such a
        /// server refuses to start.
        #[arg(long, requires = "http", conflicts_with = "token_env")]
        no_auth: bool,
        /// How long a call of an --upstream server's tool may run before it is cancelled
        /// (default 60).
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
        timeout: Option<std::time::Duration>,
        /// With --http: sessions alive at once; past it `initialize` gets 503 (default 1000).
        #[arg(long, value_name = "N", requires = "http")]
        max_sessions: Option<usize>,
        /// With --http: connections served at once (default 1024).
        #[arg(long, value_name = "N", requires = "http")]
        max_connections: Option<usize>,
        /// With --http: seconds a session may go without a request before it ends (default
        /// 300).
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, requires = "http")]
        session_idle_timeout: Option<std::time::Duration>,
        /// With --http: seconds a client may take to send a request's headers (default 30).
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, requires = "http")]
        header_read_timeout: Option<std::time::Duration>,
        /// With --http: seconds a connection may carry nothing before it is closed (default
        /// 120).
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, requires = "http")]
        idle_timeout: Option<std::time::Duration>,
        /// Tool calls one client may run at once (default 32); past it, an error to retry.
        #[arg(long, value_name = "N")]
        max_calls_per_session: Option<usize>,
        /// Tool calls all clients together may run at once (default 256).
        #[arg(long, value_name = "N")]
        max_calls: Option<usize>,
        /// Seconds one tool call may run before it is cancelled and answered with an error
        /// (default 300).
        #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
        max_call_time: Option<std::time::Duration>,
        /// Bytes of one tool call's result sent to the client (default 100000): past it, the
        /// text is cut in the middle with a line that says so.
        #[arg(long, value_name = "BYTES")]
        max_result_bytes: Option<usize>,
        /// With --http: accept requests for this host name too (the name other machines use,
        /// such as tools.example.com or tools.example.com:8765); repeatable. Loopback names
        /// and the --http address are accepted without it.
        #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
        allowed_hosts: Vec<String>,
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// An MCP server whose tools are served too, as `SERVER.TOOL`: `stdio:COMMAND ARGS` or
        /// `http:URL`, either after `NAME=` to serve them as `NAME.TOOL`; repeatable.
        #[arg(long, value_name = "SOURCE")]
        upstream: Vec<String>,
        /// A header sent to every `http:` upstream, as 'NAME: VALUE'; repeatable.
        #[arg(long = "header", value_name = "'NAME: VALUE'")]
        headers: Vec<String>,
        /// Offer only a `search_tools` tool (BM25 over the tools) and the tools each client
        /// found with it, rather than every tool.
        #[arg(long)]
        search: bool,
    },
    /// Ask a model a question, running its tool calls (the agent loop): the answer streams to
    /// standard output, the calls and their results to standard error.
    #[cfg(feature = "agent")]
    Chat {
        #[command(flatten)]
        args: chat::ChatArgs,
        /// A JSON Lines catalog whose tools are added (declared, not executable: the model is not
        /// offered them).
        #[arg(long)]
        catalog: Option<PathBuf>,
        #[cfg(feature = "mcp")]
        #[command(flatten)]
        mcp: mcp::Sources,
    },
    /// Check calls against the tools' schemas without running them.
    Validate {
        /// A JSON Lines catalog whose tools are added to the compiled-in ones.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// A JSON Lines file of calls, each `{"id"?, "tool", "args"}`.
        #[arg(long)]
        calls: PathBuf,
    },
}

/// A number of seconds (`1.5` too), at most a day.
#[cfg(any(feature = "mcp", feature = "agent"))]
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(seconds > 0.0 && seconds <= 86_400.0) {
        return Err(format!(
            "`{text}`: give a number of seconds above 0 and at most 86400"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// A failure of the command itself, with its exit code.
pub(crate) struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn input(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

/// Runs the command line with the process's arguments, printing to standard output and error.
///
/// It works from plain `main` and from inside an async runtime alike (`#[tokio::main]`): there,
/// it runs on a thread of its own. In an `async fn`, [`run_async`] avoids that thread.
///
/// Panics that the executor catches in tools print nothing: the command line installs
/// [`silence_caught_panics`](crate::silence_caught_panics), and the error line says what
/// happened.
pub fn run(tools: impl Into<ExecutorBuilder>) -> ExitCode {
    let code = run_with(
        std::env::args_os(),
        tools,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}

/// [`run`], on the caller's async runtime.
///
/// ```no_run
/// #[tokio::main]
/// async fn main() -> std::process::ExitCode {
///     ai_tool::cli::run_async(ai_tool::Executor::builder()).await
/// }
/// ```
pub async fn run_async(tools: impl Into<ExecutorBuilder>) -> ExitCode {
    let code = run_with_async(
        std::env::args_os(),
        tools,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    )
    .await;
    ExitCode::from(code)
}

/// Runs the command line with the given arguments (the first is the program name) and
/// writers; returns the exit code. For tests and embedding. Like [`run`], it works inside an
/// async runtime too.
pub fn run_with<I, T>(
    args: I,
    tools: impl Into<ExecutorBuilder>,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match parse_args(args, out, err) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let tools = tools.into();
    let work = move || {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                let _ = writeln!(err, "error: cannot start the async runtime: {e}");
                return 1;
            }
        };
        runtime.block_on(run_command(cli, tools, out, err))
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    // A runtime cannot be started, nor blocked on, from a thread that runs one.
    std::thread::scope(|scope| scope.spawn(work).join()).unwrap_or(1)
}

/// [`run_with`], on the caller's async runtime.
pub async fn run_with_async<I, T>(
    args: I,
    tools: impl Into<ExecutorBuilder>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match parse_args(args, out, err) {
        Ok(cli) => run_command(cli, tools.into(), out, err).await,
        Err(code) => code,
    }
}

/// The parsed command line, or the exit code after clap printed help, a version or an error.
fn parse_args<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> Result<Cli, u8>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args).map_err(|e| {
        let code = if e.use_stderr() { 2 } else { 0 };
        let target: &mut dyn Write = if e.use_stderr() { err } else { out };
        let _ = write!(target, "{}", e.render());
        code
    })
}

async fn run_command(
    cli: Cli,
    tools: ExecutorBuilder,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    crate::silence_caught_panics();
    match dispatch(cli.command, tools, out, err).await {
        Ok(()) => 0,
        Err(failure) => {
            let _ = writeln!(err, "error: {}", failure.message);
            failure.code
        }
    }
}

async fn dispatch(
    command: Command,
    tools: ExecutorBuilder,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    match command {
        Command::Tools {
            catalog,
            json,
            format,
            strict,
            #[cfg(feature = "mcp")]
            mcp,
            #[cfg(feature = "agent")]
            declared,
        } => {
            #[cfg(feature = "agent")]
            if let Some(file) = declared {
                return route::list(&file, json, out, err);
            }
            #[cfg(feature = "mcp")]
            let tools = mcp.add_to(tools).await?;
            let tools = open(tools, catalog.as_deref())?;
            match format {
                Some(format) => declare(&tools, format, strict, out, err),
                None => list(&tools, json, out, err),
            }
        }
        Command::ParseCalls {
            format,
            strict,
            response,
            catalog,
        } => {
            let tools = open(tools, catalog.as_deref())?;
            for call in parse(&tools, format, strict, &response)? {
                let line =
                    serde_json::to_string(&call).map_err(|e| Failure::input(e.to_string()))?;
                write_line(out, &line)?;
            }
            Ok(())
        }
        Command::Retrieve {
            query,
            catalog,
            retriever,
            k,
            model,
        } => {
            let tools = open(tools, catalog.as_deref())?;
            let specs: Vec<&ToolSpec> = tools.tools().collect();
            let model = model.unwrap_or_else(retrieve::default_model_dir);
            let built = retrieve::build(&specs, retriever, &model).await?;
            let options = crate::retrieval::RetrieveOptions {
                match_count: k,
                ..Default::default()
            };
            let found = built
                .retrieve(&query, &options)
                .await
                .map_err(|e| Failure::input(e.to_string()))?;
            retrieve::print_ranked(&found, out)
        }
        Command::EvalRetrieval {
            catalog,
            queries,
            retriever,
            k,
            limit,
            fusion,
            model,
            json,
        } => {
            // Names are labels here, never sent to a model: any name without spaces will do.
            let entries = crate::catalog::read_path_with(&catalog, crate::catalog::NameRule::Label)
                .map_err(|e| Failure::input(e.to_string()))?;
            let specs: Vec<&ToolSpec> = entries.iter().map(|e| &e.spec).collect();
            let model = model.unwrap_or_else(retrieve::default_model_dir);
            let mut built = retrieve::build(&specs, retriever, &model).await?;
            if let Some(fusion) = fusion {
                built = built.with_fusion(fusion);
            }
            let report = retrieve::evaluate(&built, retriever, &queries, k, limit).await?;
            retrieve::print_report(&report, json, out)
        }
        Command::RunCalls {
            format,
            strict,
            response,
            catalog,
        } => {
            let tools = open(tools, catalog.as_deref())?;
            let calls = parse(&tools, format, strict, &response)?;
            let results = tools.execute_calls(&calls).await;
            let aliases = declarations(&tools, format, strict).aliases;
            let rendered = provider::render_results(format, &results, &aliases);
            write_line(
                out,
                &serde_json::to_string_pretty(&rendered).unwrap_or_default(),
            )
        }
        Command::Call {
            name,
            args,
            catalog,
            #[cfg(feature = "mcp")]
            mcp,
        } => {
            #[cfg(feature = "mcp")]
            let tools = mcp.add_to(tools).await?;
            let tools = open(tools, catalog.as_deref())?;
            call(&tools, &name, &args, out).await
        }
        #[cfg(feature = "mcp")]
        Command::Serve {
            stdio,
            http,
            token_env,
            no_auth,
            timeout,
            max_sessions,
            max_connections,
            session_idle_timeout,
            header_read_timeout,
            idle_timeout,
            max_calls_per_session,
            max_calls,
            max_call_time,
            max_result_bytes,
            allowed_hosts,
            catalog,
            upstream,
            headers,
            search,
        } => {
            let upstreams = mcp::Sources::from_upstreams(&upstream, &headers, timeout)?
                .connect()
                .await?;
            let tools = open(tools, catalog.as_deref())?;
            let mut limits = crate::mcp::HttpLimits::default();
            if let Some(n) = max_sessions {
                limits = limits.with_max_sessions(n);
            }
            if let Some(n) = max_connections {
                limits = limits.with_max_connections(n);
            }
            if let Some(t) = session_idle_timeout {
                limits = limits.with_session_idle_timeout(t);
            }
            if let Some(t) = header_read_timeout {
                limits = limits.with_header_read_timeout(t);
            }
            if let Some(t) = idle_timeout {
                limits = limits.with_idle_connection_timeout(t);
            }
            let mut calls = crate::mcp::CallLimits::default();
            if let Some(n) = max_calls_per_session {
                calls = calls.with_per_session(n);
            }
            if let Some(n) = max_calls {
                calls = calls.with_total(n);
            }
            if let Some(limit) = max_call_time {
                calls = calls.with_call_timeout(limit);
            }
            let how = mcp::Serve {
                stdio,
                http,
                token_env,
                allowed_hosts,
                search,
                no_auth,
                limits,
                calls,
                max_result_bytes,
            };
            mcp::serve(tools, upstreams, how, err).await
        }
        #[cfg(feature = "agent")]
        Command::Chat {
            args,
            catalog,
            #[cfg(feature = "mcp")]
            mcp,
        } => {
            #[cfg(feature = "mcp")]
            let tools = mcp.add_to(tools).await?;
            let tools = open(tools, catalog.as_deref())?;
            chat::chat(tools, args, out, err).await
        }
        #[cfg(feature = "agent")]
        Command::Route {
            query,
            declared,
            schema_type,
            site,
            threshold,
            fallback,
            json,
        } => {
            let args = route::RouteArgs {
                file: &declared,
                query: &query,
                schema_type: &schema_type,
                site,
                threshold,
                fallback,
                as_json: json,
            };
            route::route(args, out, err).await
        }
        Command::Validate { catalog, calls } => {
            let tools = open(tools, catalog.as_deref())?;
            validate(&tools, &calls, out)
        }
    }
}

/// The executor of the compiled-in tools and, when asked for, a catalog's: one registry, with
/// one duplicate check and one did-you-mean.
fn open(builder: ExecutorBuilder, catalog: Option<&Path>) -> Result<Executor, Failure> {
    let builder = match catalog {
        Some(path) => builder.catalog_file(path),
        None => builder,
    };
    builder.build().map_err(|e| {
        let problems: Vec<String> = e
            .problems
            .iter()
            .map(|p| one_line(&p.to_string()))
            .collect();
        Failure::input(problems.join("; "))
    })
}

fn list(
    tools: &Executor,
    as_json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    if as_json {
        let specs: Vec<&ToolSpec> = tools.tools().collect();
        let text =
            serde_json::to_string_pretty(&specs).map_err(|e| Failure::input(e.to_string()))?;
        return write_line(out, &text);
    }
    if tools.tools().next().is_none() {
        let _ = writeln!(
            err,
            "no tools: this program has no compiled-in tools, and no --catalog FILE was given"
        );
        return Ok(());
    }
    let width = tools.tools().map(|s| s.name.len()).max().unwrap_or(0);
    for spec in tools.tools() {
        let summary = spec.description.lines().next().unwrap_or_default();
        write_line(out, &format!("{:width$}  {summary}", spec.name))?;
    }
    Ok(())
}

async fn call(
    tools: &Executor,
    name: &str,
    args: &str,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let args: Value = serde_json::from_str(args)
        .map_err(|e| Failure::input(format!("ARGS_JSON is not valid JSON: {e}")))?;
    match tools.execute(name, args).await {
        Ok(output) => {
            let text = match (&output.structured, output.content.is_empty()) {
                (Some(value), true) => serde_json::to_string_pretty(value).unwrap_or_default(),
                _ => output.to_text(),
            };
            write_line(out, &text)
        }
        Err(
            e @ (ToolError::UnknownTool { .. }
            | ToolError::InvalidArguments { .. }
            | ToolError::ArgumentsTooLarge { .. }
            | ToolError::NotExecutable { .. }),
        ) => Err(Failure::input(e.to_string())),
        Err(e) => Err(Failure {
            code: 1,
            message: e.to_string(),
        }),
    }
}

fn validate(tools: &Executor, calls: &Path, out: &mut dyn Write) -> Result<(), Failure> {
    let text = std::fs::read_to_string(calls)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", calls.display())))?;
    let (mut valid, mut invalid) = (0usize, 0usize);
    for (index, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", calls.display(), index + 1);
        let line: Value = serde_json::from_str(raw)
            .map_err(|e| Failure::input(format!("{at}: malformed JSON: {e}")))?;
        let Some(tool) = line.get("tool").and_then(Value::as_str) else {
            return Err(Failure::input(format!(
                "{at}: a call needs a string `tool`"
            )));
        };
        let args = line.get("args").cloned().unwrap_or_else(|| json!({}));
        let errors: Vec<String> = match tools.validate(tool, &args) {
            Ok(()) => Vec::new(),
            Err(ToolError::InvalidArguments { violations, .. }) => {
                violations.iter().map(ToString::to_string).collect()
            }
            Err(other) => vec![other.to_string()],
        };
        if errors.is_empty() {
            valid += 1;
        } else {
            invalid += 1;
        }
        let verdict = json!({
            "id": line.get("id").cloned().unwrap_or(Value::Null),
            "tool": tool,
            "valid": errors.is_empty(),
            "errors": errors,
        });
        write_line(out, &verdict.to_string())?;
    }
    write_line(out, &format!("{valid} valid, {invalid} invalid"))
}

fn declare(
    tools: &Executor,
    format: Format,
    strict: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let declarations = declarations(tools, format, strict);
    for note in &declarations.notes {
        let _ = writeln!(err, "warning: {note}");
    }
    write_line(
        out,
        &serde_json::to_string_pretty(&declarations.tools).unwrap_or_default(),
    )
}

/// The tools as declared to `format`: the aliases and strict encodings that calls are read back
/// with are those of the declaration the model was given.
fn declarations(tools: &Executor, format: Format, strict: bool) -> provider::Declarations {
    let options = DeclareOptions {
        strict,
        ..DeclareOptions::default()
    };
    tools.declarations(format, &options)
}

fn parse(
    tools: &Executor,
    format: Format,
    strict: bool,
    path: &Path,
) -> Result<Vec<ToolCall>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let response = provider::read_response(format, &text, &Default::default())
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let aliases = declarations(tools, format, strict).aliases;
    provider::parse_calls(format, &response, &aliases)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}

fn parse_format(text: &str) -> Result<Format, String> {
    text.parse()
        .map_err(|e: provider::ParseFormatError| e.to_string())
}

pub(crate) fn write_line(out: &mut dyn Write, text: &str) -> Result<(), Failure> {
    writeln!(out, "{text}").map_err(|e| Failure {
        code: 1,
        message: format!("cannot write the output: {e}"),
    })
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
