//! The executor: built once, then each call is one hash lookup, one validation and the call.

mod added;
mod batch;
mod blocking;
mod build;
mod build_error;
mod call;
mod new_tool;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tool_core::schema::SchemaLimits;
use tool_core::{ToolError, ToolOutput, ToolSpec};

pub use added::AddedTool;
pub use blocking::{ExecutorMetrics, DEFAULT_MAX_BLOCKING_CALLS};
pub use build::{ExecutorBuilder, DEFAULT_MAX_ARGUMENT_BYTES};
pub use build_error::{BuildError, BuildProblem};
pub use call::Call;
pub use new_tool::IntoTool;

use crate::arguments::{ArgumentLimits, ArgumentValidator};
use crate::arguments::{Arguments, IntoArguments, RawArguments};
use crate::boxed::BoxFuture;
use crate::dynamic::DynamicInvoke;
use crate::guard::{self, Guard};
use crate::registration::{ExternalConverter, Invoke, Service, SyncInvoke};
use crate::{CallOptions, Services, ToolContext};

/// Finds tools by name, validates arguments and calls them.
///
/// Cheap to clone: clones share one set of tools.
///
/// ```no_run
/// # use tool_runtime::Executor;
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let exec = Executor::builder().build()?;
/// let out = exec.execute("add", r#"{"a": 1, "b": 2}"#).await?;
/// println!("{}", out.to_text());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

/// Tool names to their entries' positions. foldhash rather than SipHash: tool names are short,
/// and foldhash hashes them in a few word operations, with a seed chosen per process.
type NameIndex = HashMap<Arc<str>, usize, foldhash::fast::RandomState>;

struct Inner {
    entries: Vec<Entry>,
    /// Tool names to entries.
    index: NameIndex,
    services: Arc<Services>,
    default_timeout: Option<Duration>,
    /// What the builder held schemas to, for [`Executor::builder_like`].
    schema_limits: SchemaLimits,
    argument_limits: ArgumentLimits,
    /// The sync tools' share of the blocking pool.
    blocking: blocking::BlockingSlots,
}

pub(crate) struct Entry {
    spec: ToolSpec,
    name: Arc<str>,
    schema: ArgumentValidator,
    /// What checks a dynamic tool's structured results, when it declares an output schema.
    output: Option<ArgumentValidator>,
    callable: Callable,
    timeout: Option<Duration>,
}

pub(crate) enum Callable {
    Registered {
        invoke: Invoke,
        service: Option<Service>,
        external: Option<ExternalConverter>,
    },
    Dynamic(DynamicInvoke),
    Declared,
}

impl Executor {
    /// Starts building an executor.
    pub fn builder() -> ExecutorBuilder {
        ExecutorBuilder::default()
    }

    /// A builder with this executor's limits and none of its tools or services: the default
    /// time limit and the limits on arguments and schemas; `#[ai_tool]` tools off. For tools
    /// that join later under the same rules, such as an MCP server's imported tools that a
    /// gateway lists again.
    pub fn builder_like(&self) -> ExecutorBuilder {
        let inner = &self.inner;
        let builder = Executor::builder()
            .registered_tools(false)
            .max_argument_bytes(inner.argument_limits.bytes)
            .max_argument_depth(inner.argument_limits.depth)
            .schema_limits(inner.schema_limits)
            .max_blocking_calls(inner.blocking.max());
        match inner.default_timeout {
            Some(limit) => builder.default_timeout(limit),
            None => builder,
        }
    }

    /// What the executor's calls hold now: the sync tools' calls on the blocking pool, and
    /// those among them whose caller stopped waiting but whose tool still runs.
    pub fn metrics(&self) -> ExecutorMetrics {
        self.inner.blocking.metrics()
    }

    /// Every tool this executor exposes, in a stable order: tools from `#[ai_tool]` by name,
    /// then dynamic and catalog tools in the order they were added.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ToolSpec> + '_ {
        self.inner.entries.iter().map(|e| &e.spec)
    }

    /// The tool with this name.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entry(name).ok().map(|e| &e.spec)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    /// Whether the tool can be executed here (catalog declarations cannot).
    pub fn is_executable(&self, name: &str) -> bool {
        self.entry(name)
            .is_ok_and(|e| !matches!(e.callable, Callable::Declared))
    }

    /// The values provided to this executor.
    pub fn services(&self) -> &Services {
        &self.inner.services
    }

    /// Checks arguments as [`Executor::execute`] would, without running the tool: the size cap,
    /// the nesting limit, and the schema, with a strict-mode `null` for an optional property
    /// taken as absent. The arguments are what `execute` takes: a JSON value, or JSON text
    /// (text that is not JSON is `InvalidArguments` naming the JSON error). It fails when
    /// `execute` would refuse the same arguments, with the same error; the one exception is a
    /// parameter type whose own `Deserialize` refuses more than its schema says, which only
    /// running the call finds out.
    pub fn validate<A: IntoArguments>(&self, name: &str, mut args: A) -> Result<(), ToolError> {
        let entry = self.entry(name)?;
        crate::arguments::check_raw(
            &entry.spec.name,
            &entry.schema,
            &entry.spec.parameters,
            args.raw(),
            self.inner.argument_limits,
        )
    }

    /// Checks a model's call as [`Executor::execute_call`] would run it, without running it:
    /// arguments given as a JSON string (as OpenAI sends them) are read as JSON text, any other
    /// value as it is.
    pub fn validate_call(&self, call: &tool_core::ToolCall) -> Result<(), ToolError> {
        match &call.arguments {
            serde_json::Value::String(text) => self.validate(&call.name, text.as_str()),
            arguments => self.validate(&call.name, arguments),
        }
    }

    /// Checks a result given from outside for a call of `name` (an external tool's answer, a
    /// result replayed from a log) as the executor checks its dynamic tools' results: structured
    /// content that the tool's output schema refuses is [`ToolError::Failed`] naming every
    /// violation. Any tool with an output schema is checked, typed and declared ones too. A
    /// result that reports an error, one without structured content, and a tool without an
    /// output schema pass; so does one whose output schema cannot be compiled (with a
    /// `tracing` warning).
    pub fn check_output(&self, name: &str, output: &ToolOutput) -> Result<(), ToolError> {
        let entry = self.entry(name)?;
        if let Some(check) = &entry.output {
            return output_follows_schema(entry, check, output);
        }
        let (Some(schema), Some(_), false) = (
            &entry.spec.output_schema,
            &output.structured,
            output.is_error,
        ) else {
            return Ok(());
        };
        match ArgumentValidator::compile(schema, &self.inner.schema_limits) {
            Ok(check) => output_follows_schema(entry, &check, output),
            Err(problem) => {
                tracing::warn!(tool = %entry.spec.name, "the output schema is not checked: {problem}");
                Ok(())
            }
        }
    }

    /// Validates the arguments and runs the tool.
    ///
    /// The returned [`Call`] is a future; nothing happens until it is awaited.
    pub fn execute<'c, A: IntoArguments>(&'c self, name: &'c str, args: A) -> Call<'c, A> {
        Call::new(self, name, args, &crate::options::NO_OPTIONS)
    }

    /// [`Executor::execute`] with a call id and a cancellation token.
    pub fn execute_with<'c, A: IntoArguments>(
        &'c self,
        name: &'c str,
        args: A,
        options: &'c CallOptions,
    ) -> Call<'c, A> {
        Call::new(self, name, args, options)
    }

    /// A call's first poll: finds the tool and runs a sync one; an async one is started and
    /// polled once, and left in `waiting` when it is not done.
    ///
    /// It returns what its [`Call`]'s poll returns, so that a sync tool's result is written
    /// once, where the caller wants it, rather than copied out of one enum into another.
    #[inline]
    fn start<'c>(
        &'c self,
        name: &str,
        raw: &mut RawArguments<'_>,
        options: &'c CallOptions,
        cx: &mut Context<'_>,
        waiting: &mut Option<BoxFuture<'c, Result<ToolOutput, ToolError>>>,
    ) -> Poll<Result<ToolOutput, ToolError>> {
        let Some((index, entry)) = self.entry_at(name) else {
            return Poll::Ready(Err(self.unknown(name)));
        };
        let cancellation = options.cancellation.as_ref();
        if cancellation.is_some_and(CancellationToken::is_cancelled) {
            return Poll::Ready(Err(ToolError::Cancelled {
                tool: name.to_owned(),
            }));
        }
        // The context borrows from the executor and the caller: a sync call ends before they
        // do, and an async call's future lives inside the `Call` that borrows them.
        let ctx = ToolContext::borrowed(&entry.name, &self.inner.services, options);
        match &entry.callable {
            // A sync tool runs in place. One under a time limit (its own or the executor's
            // default) runs on the blocking pool instead, so that the limit can end the wait.
            Callable::Registered {
                invoke: Invoke::Sync(call),
                service,
                external,
            } if entry.timeout.or(self.inner.default_timeout).is_none() => {
                let args = self.arguments(entry, raw);
                guard::sync_call_into(
                    name,
                    || call(service.as_ref().map(Service::borrow), args, &ctx, *external),
                    Poll::Ready,
                )
            }
            _ => match self.start_waiting(index, entry, raw, ctx, cancellation) {
                Ok(future) => {
                    let polled = waiting.insert(future).as_mut().poll(cx);
                    if polled.is_ready() {
                        *waiting = None;
                    }
                    polled
                }
                Err(error) => Poll::Ready(Err(error)),
            },
        }
    }

    /// Starts a call that is awaited: an async tool, a dynamic one, or a sync one under a time
    /// limit (its own or the default). Each is guarded by its time limit and the caller's token.
    fn start_waiting<'c>(
        &'c self,
        index: usize,
        entry: &'c Entry,
        raw: &mut RawArguments<'_>,
        ctx: ToolContext<'c>,
        cancellation: Option<&'c CancellationToken>,
    ) -> Result<BoxFuture<'c, Result<ToolOutput, ToolError>>, ToolError> {
        let name = &entry.spec.name;
        let timeout = entry.timeout.or(self.inner.default_timeout);
        // A call under a limit gets a token the guard cancels when the limit passes.
        let call_token = timeout.map(|_| ctx.limited_token());
        let guard = |timeout| Guard::new(&entry.name, timeout, cancellation, call_token.clone());
        match &entry.callable {
            Callable::Registered {
                invoke: Invoke::Sync(call),
                service,
                external,
            } => {
                // Nothing may run before it is known that the limit can be kept here.
                if let Some(limit) = timeout {
                    guard::check_timer(name, limit)?;
                }
                let call = (*call, service.clone(), *external);
                let raw = std::mem::take(raw).into_owned();
                let blocking = self.run_blocking(index, call, raw, ctx.to_static());
                Ok(guard(timeout).boxed(blocking))
            }
            // An async tool's future borrows the context's parts and the service for the call.
            Callable::Registered {
                invoke: Invoke::Async(call),
                service,
                external,
            } => {
                let args = self.arguments(entry, raw);
                guard::sync_call(name, || {
                    call(
                        service.as_ref().map(Service::borrow),
                        args,
                        ctx,
                        *external,
                        guard(timeout),
                    )
                })
            }
            // A dynamic tool's closure takes a context it can keep.
            Callable::Dynamic(call) => self
                .arguments(entry, raw)
                .into_checked_value()
                // The closure may panic before it returns its future.
                .and_then(|args| {
                    guard::sync_call(name, || Ok(call(args, ctx.to_static(), guard(timeout))))
                })
                .map(|future| match &entry.output {
                    None => future,
                    Some(check) => Box::pin(checked_output(future, entry, check)),
                }),
            Callable::Declared => self
                .arguments(entry, raw)
                .into_checked_value()
                .and_then(|_| {
                    Err(ToolError::NotExecutable {
                        tool: name.to_owned(),
                    })
                }),
        }
    }

    /// Runs the sync tool of entry `index` on the blocking pool, with everything it needs owned,
    /// once one of the executor's blocking slots is free. The slot is held until the tool
    /// returns, even when its caller stopped waiting.
    fn run_blocking(
        &self,
        index: usize,
        (call, service, external): (SyncInvoke, Option<Service>, Option<ExternalConverter>),
        mut raw: RawArguments<'static>,
        ctx: ToolContext<'static>,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'static {
        let exec = self.clone();
        let tool = Arc::clone(&self.inner.entries[index].name);
        async move {
            let slot = exec.inner.blocking.take().await;
            let (watch, _waiter) = exec.inner.blocking.watch();
            let task = tokio::task::spawn_blocking(move || {
                let _slot = slot;
                let _watch = watch;
                Self::run_sync(&exec, index, call, service, external, &mut raw, &ctx)
            });
            task.await
                .unwrap_or_else(|e| Err(guard::panicked(&tool, &e.to_string())))
        }
    }

    /// The sync call of [`Executor::run_blocking`], on its thread.
    fn run_sync(
        exec: &Executor,
        index: usize,
        call: SyncInvoke,
        service: Option<Service>,
        external: Option<ExternalConverter>,
        raw: &mut RawArguments<'static>,
        ctx: &ToolContext<'static>,
    ) -> Result<ToolOutput, ToolError> {
        {
            let entry = &exec.inner.entries[index];
            // Timed out or cancelled while it waited for a thread: the caller was told so,
            // and a tool run now would act after that answer.
            if ctx.is_cancelled() {
                let tool = entry.spec.name.to_string();
                return Err(ToolError::Cancelled { tool });
            }
            let args = exec.arguments(entry, raw);
            guard::sync_call(&entry.spec.name, || {
                call(service.as_ref().map(Service::borrow), args, ctx, external)
            })
        }
    }

    fn arguments<'e, 'r>(
        &'e self,
        entry: &'e Entry,
        raw: &'e mut RawArguments<'r>,
    ) -> Arguments<'e, 'r> {
        Arguments::new(
            raw,
            &entry.spec.name,
            &entry.schema,
            &entry.spec.parameters,
            self.inner.argument_limits,
        )
    }

    fn entry(&self, name: &str) -> Result<&Entry, ToolError> {
        match self.entry_at(name) {
            Some((_, entry)) => Ok(entry),
            None => Err(self.unknown(name)),
        }
    }

    /// The tool with this name, and where it is among the entries.
    #[inline]
    fn entry_at(&self, name: &str) -> Option<(usize, &Entry)> {
        let i = *self.inner.index.get(name)?;
        self.inner.entries.get(i).map(|entry| (i, entry))
    }

    /// The error for a name no tool has, with the closest names.
    #[cold]
    fn unknown(&self, name: &str) -> ToolError {
        ToolError::UnknownTool {
            name: name.to_owned(),
            suggestions: tool_core::suggest::closest_names(
                name,
                self.inner.entries.iter().map(|e| e.spec.name.as_str()),
                3,
            ),
        }
    }
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field(
                "tools",
                &self
                    .inner
                    .entries
                    .iter()
                    .map(|e| &e.spec.name)
                    .collect::<Vec<_>>(),
            )
            .field("services", &self.inner.services)
            .finish_non_exhaustive()
    }
}
/// A dynamic tool's result, held to its output schema (MCP: a client should check structured
/// results against the tool's `outputSchema`): structured content the schema refuses fails
/// the call, naming what is wrong. Results reporting an error are passed on as they are.
async fn checked_output(
    future: BoxFuture<'_, Result<ToolOutput, ToolError>>,
    entry: &Entry,
    check: &ArgumentValidator,
) -> Result<ToolOutput, ToolError> {
    let output = future.await?;
    output_follows_schema(entry, check, &output)?;
    Ok(output)
}

/// Whether a result's structured content follows the tool's output schema; [`ToolError::Failed`]
/// naming the violations when it does not.
fn output_follows_schema(
    entry: &Entry,
    check: &ArgumentValidator,
    output: &ToolOutput,
) -> Result<(), ToolError> {
    /// How many violations the message names at most.
    const NAMED: usize = 20;
    let (Some(structured), Some(schema), false) = (
        &output.structured,
        &entry.spec.output_schema,
        output.is_error,
    ) else {
        return Ok(());
    };
    match check.check(&entry.spec.name, schema, structured) {
        Err(ToolError::InvalidArguments { violations, .. }) => {
            let mut named: Vec<String> = violations
                .iter()
                .take(NAMED)
                .map(ToString::to_string)
                .collect();
            if violations.len() > NAMED {
                named.push(format!("and {} more", violations.len() - NAMED));
            }
            Err(ToolError::Failed {
                tool: entry.spec.name.clone(),
                message: format!(
                    "its result does not follow its output schema: {}",
                    named.join("; ")
                ),
                error: None,
                source: None,
            })
        }
        _ => Ok(()),
    }
}
