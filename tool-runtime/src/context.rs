use std::any::{Any, TypeId};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::extensions::Extensions;
use crate::log_level::LogLevel;
use crate::CallOptions;
use tool_core::ToolError;

/// Values provided to an executor, found by type: the services whose methods are tools, and
/// anything else a tool wants through its [`ToolContext`].
///
/// Kept as [`Extensions`] are (one value per type, shared, never copied); unlike a call's
/// extensions, they are given once, to the executor, for every call.
#[derive(Default)]
pub struct Services {
    values: Extensions,
}

impl Services {
    /// Adds a value, replacing any earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.values.insert_arc(value);
    }

    /// The value of type `T`, if one was provided.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values.get::<T>()
    }

    /// The value of type `T` as a shared pointer, if one was provided.
    pub fn get_arc<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.values.get_arc::<T>()
    }

    pub(crate) fn get_dyn(&self, id: TypeId) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.values.get_by_id(id)
    }

    /// Whether a value of this type was provided.
    pub fn contains(&self, id: TypeId) -> bool {
        self.get_dyn(id).is_some()
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.values.fmt(f)
    }
}

/// What a tool knows about the call it is serving.
///
/// Declare a `&ToolContext` parameter to receive it; it never appears in the schema. For a sync
/// tool the context borrows what it shows from the executor and the caller, so making one costs
/// nothing; an async tool's context owns it (`ToolContext<'static>`). Cloning is cheap; use
/// [`ToolContext::to_static`] to keep a context beyond the call.
#[derive(Clone)]
pub struct ToolContext<'a> {
    parts: Parts<'a>,
    /// The call's own token: made when the call starts under a time limit (a child of the
    /// caller's, cancelled when the limit passes), or on first use for a call that brought none.
    own_token: OnceLock<CancellationToken>,
}

/// What a context shows, borrowed for the length of a sync call or owned by an async one. One
/// variant for all of it, so that dropping a borrowed context costs one test.
#[derive(Clone)]
enum Parts<'a> {
    Borrowed(Refs<'a>),
    Owned(Owned),
}

#[derive(Clone, Copy)]
struct Refs<'a> {
    tool_name: &'a Arc<str>,
    services: &'a Arc<Services>,
    /// What the caller gave the call besides its arguments.
    options: &'a CallOptions,
}

#[derive(Clone)]
struct Owned {
    tool_name: Arc<str>,
    services: Arc<Services>,
    options: CallOptions,
}

/// Where a call's progress reports go, given by the caller in `CallOptions::with_progress` (an
/// MCP server sends them to its client as `notifications/progress`). Called on the tool's
/// thread: it should return at once.
pub type ProgressSink = Arc<dyn Fn(Progress<'_>) + Send + Sync>;

/// One progress report of a call, from [`ToolContext::progress`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress<'a> {
    /// How much is done; it should grow with every report.
    pub done: f64,
    /// How much there is to do, when known.
    pub total: Option<f64>,
    /// What is happening, in words.
    pub message: Option<&'a str>,
}

impl Parts<'_> {
    fn refs(&self) -> Refs<'_> {
        match self {
            Parts::Borrowed(refs) => *refs,
            Parts::Owned(owned) => Refs {
                tool_name: &owned.tool_name,
                services: &owned.services,
                options: &owned.options,
            },
        }
    }
}

impl Refs<'_> {
    fn to_owned(self) -> Owned {
        Owned {
            tool_name: Arc::clone(self.tool_name),
            services: Arc::clone(self.services),
            options: self.options.clone(),
        }
    }
}

impl<'a> ToolContext<'a> {
    /// A context that borrows everything, for a call that ends before the borrows do.
    pub(crate) fn borrowed(
        tool_name: &'a Arc<str>,
        services: &'a Arc<Services>,
        options: &'a CallOptions,
    ) -> Self {
        ToolContext {
            parts: Parts::Borrowed(Refs {
                tool_name,
                services,
                options,
            }),
            own_token: OnceLock::new(),
        }
    }

    /// The same context, owning what it shares (a few reference counts), so that it can outlive
    /// the call: moved into a spawned task, for example.
    pub fn to_static(&self) -> ToolContext<'static> {
        ToolContext {
            parts: Parts::Owned(self.parts.refs().to_owned()),
            own_token: self.own_token.clone(),
        }
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        self.parts.refs().tool_name
    }

    /// The provider's id of this call, when the call came with one.
    pub fn call_id(&self) -> Option<&str> {
        self.parts.refs().options.call_id.as_deref()
    }

    /// The token that is cancelled when the caller gives up on this call, or when the call's
    /// time limit passes. Long-running tools should watch it (`token.cancelled().await`) and
    /// stop early: a sync tool under a time limit runs on the blocking pool, and only this
    /// token tells it that its caller has stopped waiting. Without a time limit it is the
    /// token the caller passed in `CallOptions`; a call that brought none gets a token of its
    /// own, so one call can never cancel another.
    pub fn cancellation_token(&self) -> &CancellationToken {
        if let Some(own) = self.own_token.get() {
            return own;
        }
        match self.caller_token() {
            Some(token) => token,
            None => self.own_token.get_or_init(CancellationToken::new),
        }
    }

    /// Gives the call a token of its own, a child of the caller's if it brought one, for the
    /// guard to cancel when the time limit passes or the call is dropped unfinished.
    pub(crate) fn limited_token(&self) -> CancellationToken {
        let token = match self.caller_token() {
            Some(caller) => caller.child_token(),
            None => CancellationToken::new(),
        };
        self.own_token.get_or_init(|| token).clone()
    }

    /// What a call this one makes in turn is given: the caller's options, with this call's
    /// token as its cancellation, so that giving up on this call gives up on that one.
    pub(crate) fn forwarded_options(&self) -> CallOptions {
        let mut options = self.parts.refs().options.clone();
        options.cancellation = Some(self.cancellation_token().clone());
        options
    }

    /// The caller's token, when the call brought one.
    pub(crate) fn caller_token(&self) -> Option<&CancellationToken> {
        self.parts.refs().options.cancellation.as_ref()
    }

    /// Whether the caller has cancelled this call.
    pub fn is_cancelled(&self) -> bool {
        self.own_token
            .get()
            .or(self.caller_token())
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// A value provided to the executor with `ExecutorBuilder::service` or `provide`.
    pub fn service<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.services().get::<T>()
    }

    /// Everything provided to the executor.
    pub fn services(&self) -> &Services {
        self.parts.refs().services
    }

    /// Reports progress to the caller, when it asked for reports (an MCP client that gave a
    /// progress token gets `notifications/progress`); does nothing otherwise.
    ///
    /// ```
    /// # use tool_runtime::ToolContext;
    /// # let ctx = ToolContext::detached("import");
    /// ctx.progress(3.0, Some(10.0), Some("3 of 10 files"));
    /// ```
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.parts.refs().options.progress {
            sink(Progress {
                done,
                total,
                message,
            });
        }
    }

    /// Whether the caller wants progress reports.
    pub fn wants_progress(&self) -> bool {
        self.parts.refs().options.progress.is_some()
    }

    /// Logs a message for the caller, when it asked for log messages (an MCP client gets
    /// those at or above the level it set as `notifications/message`); does nothing
    /// otherwise. The caller decides which levels it keeps.
    ///
    /// ```
    /// # use tool_runtime::{LogLevel, ToolContext};
    /// # let ctx = ToolContext::detached("import");
    /// ctx.log(LogLevel::Warning, "3 files skipped: not readable");
    /// ```
    pub fn log(&self, level: LogLevel, message: &str) {
        if let Some(sink) = &self.parts.refs().options.log {
            sink(level, message);
        }
    }

    /// Asks the user for input mid-call: `message` in words, the answer shaped by `schema`
    /// (an object of primitive properties, MCP's `requestedSchema`). An MCP server sends its
    /// client `elicitation/create` when the client can answer one. An accepted answer is
    /// checked against `schema` before it is given back. A call whose caller can ask no one
    /// fails with an error that says so, never with an answer made up.
    ///
    /// ```
    /// # use tool_runtime::ToolContext;
    /// # use serde_json::json;
    /// # async fn demo(ctx: &ToolContext<'_>) -> Result<(), tool_runtime::ToolError> {
    /// let schema = json!({ "type": "object", "properties": { "email": { "type": "string" } }, "required": ["email"] });
    /// let answer = ctx.elicit("Which email should the invoice go to?", schema).await?;
    /// # Ok(()) }
    /// ```
    pub async fn elicit(
        &self,
        message: &str,
        schema: serde_json::Value,
    ) -> Result<crate::Elicited, ToolError> {
        let tool = self.tool_name().to_owned();
        let Some(elicitor) = self.parts.refs().options.elicit.clone() else {
            return Err(ToolError::failed(
                tool,
                "this call cannot ask the user: its caller named no one to ask (an MCP client that \
                 does not declare elicitation, or CallOptions without an elicitor)",
            ));
        };
        let question = crate::Elicitation {
            message: message.to_owned(),
            schema,
        };
        let answer = match elicitor(question.clone()).await {
            Ok(answer) => answer,
            // A question that ended because the call was stopped: the call is cancelled.
            Err(_) if self.is_cancelled() => return Err(ToolError::Cancelled { tool }),
            Err(why) => {
                return Err(ToolError::failed(
                    &tool,
                    format!("asking the user failed: {why}"),
                ))
            }
        };
        crate::elicit::checked(&tool, &question, answer)
    }

    /// Asks a model mid-call: an MCP server sends its client `sampling/createMessage` when the
    /// client can answer one (its model, with its user's consent). A call whose caller can
    /// reach no model fails with an error that says so.
    pub async fn sample(
        &self,
        request: crate::SamplingRequest,
    ) -> Result<crate::Sampled, ToolError> {
        let tool = self.tool_name().to_owned();
        let Some(sampler) = self.parts.refs().options.sample.clone() else {
            return Err(ToolError::failed(
                tool,
                "this call cannot ask a model: its caller named none (an MCP client that does not declare sampling, or CallOptions without a sampler)",
            ));
        };
        sampler(request)
            .await
            .map_err(|why| ToolError::failed(&tool, format!("asking a model failed: {why}")))
    }

    /// Whether the caller can reach a model ([`ToolContext::sample`]).
    pub fn can_sample(&self) -> bool {
        self.parts.refs().options.sample.is_some()
    }

    /// Whether the caller can ask the user ([`ToolContext::elicit`]).
    pub fn can_elicit(&self) -> bool {
        self.parts.refs().options.elicit.is_some()
    }

    /// Whether the caller wants log messages (to skip building one nobody reads).
    pub fn wants_log(&self) -> bool {
        self.parts.refs().options.log.is_some()
    }

    /// The value of type `T` the caller attached to this call
    /// ([`CallOptions::with_extension`](crate::CallOptions::with_extension)), if it attached one.
    ///
    /// It is the same value in every kind of tool: one that runs in place, a sync tool with a
    /// time limit on the blocking pool, a dynamic tool, and a task the tool spawned with a
    /// [`ToolContext::to_static`] copy.
    ///
    /// ```
    /// # use tool_runtime::ToolContext;
    /// struct UserId(u64);
    ///
    /// let ctx = ToolContext::detached("orders").with_extension(UserId(42));
    /// assert_eq!(ctx.extension::<UserId>().map(|u| u.0), Some(42));
    /// assert!(ctx.extension::<String>().is_none());
    /// ```
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions().get::<T>()
    }

    /// Everything the caller attached to this call (empty when it attached nothing).
    pub fn extensions(&self) -> &Extensions {
        &self.parts.refs().options.extensions
    }
}

impl ToolContext<'static> {
    /// A context for calling tool code directly, outside an executor (tests, converters).
    pub fn detached(tool_name: &str) -> Self {
        ToolContext {
            parts: Parts::Owned(Owned {
                tool_name: tool_name.into(),
                services: Arc::default(),
                options: CallOptions::default(),
            }),
            own_token: OnceLock::new(),
        }
    }

    /// The same context with `value` attached, as a caller attaches it with
    /// [`CallOptions::with_extension`](crate::CallOptions::with_extension): for calling tool code
    /// directly (tests). It replaces any earlier value of the same type.
    pub fn with_extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        if let Parts::Owned(owned) = &mut self.parts {
            owned.options.extensions.insert(value);
        }
        self
    }
}

impl std::fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool_name", &self.tool_name())
            .field("call_id", &self.call_id())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_copy_shows_what_the_borrowed_context_shows() {
        let (name, id): (Arc<str>, Arc<str>) = ("weather".into(), "call_1".into());
        let token = CancellationToken::new();
        let mut services = Services::default();
        services.insert(Arc::new(42u32));
        let services = Arc::new(services);
        let options = CallOptions {
            call_id: Some(id),
            cancellation: Some(token.clone()),
            ..CallOptions::default()
        }
        .with_extension(String::from("attached"));
        let borrowed = ToolContext::borrowed(&name, &services, &options);
        assert_eq!(borrowed.extension::<String>().unwrap(), "attached");
        let kept = borrowed.to_static();
        drop(borrowed);
        assert_eq!(
            (kept.tool_name(), kept.call_id()),
            ("weather", Some("call_1"))
        );
        assert_eq!(kept.service::<u32>(), Some(&42));
        drop(options);
        assert_eq!(
            kept.extension::<String>().map(String::as_str),
            Some("attached"),
            "the static copy keeps the caller's extensions"
        );
        assert!(kept.extension::<u32>().is_none());
        assert!(!kept.is_cancelled());
        token.cancel();
        assert!(kept.is_cancelled() && kept.cancellation_token().is_cancelled());
    }

    #[test]
    fn a_context_without_extensions_shows_none() {
        let ctx = ToolContext::detached("t");
        assert!(ctx.extensions().is_empty() && ctx.extension::<String>().is_none());
        let ctx = ctx.with_extension(3u8).with_extension(4u8);
        assert_eq!(ctx.extension::<u8>(), Some(&4));
        assert_eq!(ctx.to_static().extension::<u8>(), Some(&4));
    }

    #[test]
    fn a_call_without_a_token_gets_its_own() {
        let ctx = ToolContext::detached("t");
        assert!(!ctx.is_cancelled());
        ctx.cancellation_token().cancel();
        assert!(ctx.is_cancelled());
        assert!(!ToolContext::detached("t").is_cancelled());
    }
}
