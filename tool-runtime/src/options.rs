//! What a caller gives one call besides its arguments: the provider's call id, a cancellation
//! token, where progress reports and log messages go, and values for the tool to find. The
//! tool sees all of it through its [`ToolContext`](crate::ToolContext), which borrows it whole.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{Elicitor, Extensions, LogSink, ProgressSink, Sampler};

/// Per-call options, for [`Executor::execute_with`](crate::Executor::execute_with).
#[derive(Clone)]
pub struct CallOptions {
    /// The provider's id of the call, passed to the tool in its context.
    pub call_id: Option<Arc<str>>,
    /// Cancelling this token stops the call with `ToolError::Cancelled`.
    pub cancellation: Option<CancellationToken>,
    /// Where the tool's [`ToolContext::progress`](crate::ToolContext::progress) reports go.
    pub progress: Option<ProgressSink>,
    /// Where the tool's [`ToolContext::log`](crate::ToolContext::log) messages go.
    pub log: Option<LogSink>,
    /// Who the tool's [`ToolContext::elicit`](crate::ToolContext::elicit) questions go to.
    pub elicit: Option<Elicitor>,
    /// Who the tool's [`ToolContext::sample`](crate::ToolContext::sample) requests go to.
    pub sample: Option<Sampler>,
    /// Values the tool finds with [`ToolContext::extension`](crate::ToolContext::extension).
    pub extensions: Extensions,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("call_id", &self.call_id)
            .field("cancellation", &self.cancellation)
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.is_some())
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("extensions", &self.extensions)
            .finish()
    }
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions::new()
    }
}

impl CallOptions {
    /// No options: no call id, no token, no sinks, no extensions. The same as
    /// [`CallOptions::default`], usable in a `const` or `static`.
    pub const fn new() -> Self {
        CallOptions {
            call_id: None,
            cancellation: None,
            progress: None,
            log: None,
            elicit: None,
            sample: None,
            extensions: Extensions::new(),
        }
    }

    /// Options whose tool's questions ([`ToolContext::elicit`](crate::ToolContext::elicit))
    /// go to `elicitor`.
    pub fn with_elicitor(mut self, elicitor: Elicitor) -> Self {
        self.elicit = Some(elicitor);
        self
    }

    /// Options whose tool's requests to a model ([`ToolContext::sample`](crate::ToolContext::sample))
    /// go to `sampler`.
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sample = Some(sampler);
        self
    }

    /// Options with a call id.
    pub fn with_call_id(mut self, id: &str) -> Self {
        self.call_id = Some(id.into());
        self
    }

    /// Options with a cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Options sending the tool's progress reports to `sink`.
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Options sending the tool's log messages to `sink`.
    pub fn with_log(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Options attaching `value` to the call, for the tool to find with
    /// [`ToolContext::extension`](crate::ToolContext::extension); it replaces any earlier value of the same type. Options
    /// given to [`Executor::execute_calls_with`](crate::Executor::execute_calls_with) attach it to every call of the batch.
    ///
    /// ```
    /// # use tool_runtime::CallOptions;
    /// struct RequestId(String);
    ///
    /// let options = CallOptions::default().with_extension(RequestId("req-7".into()));
    /// assert!(options.extensions.contains::<RequestId>());
    /// ```
    pub fn with_extension<T: std::any::Any + Send + Sync>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }
}

/// No options: what [`Executor::execute`](crate::Executor::execute) gives a call.
pub(crate) static NO_OPTIONS: CallOptions = CallOptions::new();
