//! A call's reports to the client: progress as `notifications/progress`, log messages at or
//! above the client's level as `notifications/message`. Each goes out in order from a task of
//! its own, started by the first report (most tools report nothing): the tool's
//! `ctx.progress(..)` and `ctx.log(..)` only queue them. When the tool is done, the queue is
//! closed and its reports all sent before the call's result ([`Flush`]): a client refuses
//! progress for a request it has its answer to. A report made after that is not sent.

// MCP's logging is deprecated by SEP-2577 (rmcp marks its types so) but still in every
// protocol version this crate speaks.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tool_runtime::{LogLevel, LogSink, Progress, ProgressSink};

/// The lowest level a session's client asked for with `logging/setLevel`; none until it asks.
#[derive(Debug, Default)]
pub(crate) struct SessionLogLevel(AtomicU8);

impl SessionLogLevel {
    /// Keeps the level the client set.
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(1 + log_level(level) as u8, Ordering::Relaxed);
    }

    /// The level the client set, if it set one.
    pub(crate) fn get(&self) -> Option<LogLevel> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            n => LogLevel::ALL.get(usize::from(n - 1)).copied(),
        }
    }
}

/// MCP's level as ours.
pub(crate) fn log_level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

/// Our level as MCP's.
fn logging_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// One notification of a call.
enum Report {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

/// The most reports of one call waiting to be sent. A tool that reports faster than the
/// client reads has the reports past it left out, rather than held without bound.
const QUEUED_REPORTS: usize = 1024;

/// The queue of one call's notifications, sent in order by a task started on first use.
struct Reports {
    peer: Peer<RoleServer>,
    queue: Mutex<Queue>,
    /// The runtime of the server that made the sinks: the sending task starts there, also when
    /// a tool reports from a thread of its own (`tokio::spawn` would panic there).
    runtime: Option<tokio::runtime::Handle>,
    /// Whether a report was left out (and said so, once for the call).
    dropping: std::sync::atomic::AtomicBool,
    /// The tool, named in the warning.
    tool: Arc<str>,
}

/// Where a call's queue of reports stands.
enum Queue {
    /// Nothing reported yet.
    Idle,
    /// Reports queued, and the task that sends them.
    Open(mpsc::Sender<Report>, JoinHandle<()>),
    /// The call is done: nothing more is sent.
    Closed,
}

impl Reports {
    fn send(&self, report: Report) {
        let Some(runtime) = &self.runtime else {
            return;
        };
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Queue::Idle = *queue {
            let (sender, mut reports) = mpsc::channel::<Report>(QUEUED_REPORTS);
            let peer = self.peer.clone();
            let task = runtime.spawn(async move {
                while let Some(report) = reports.recv().await {
                    let sent = match report {
                        Report::Progress(p) => peer.notify_progress(p).await,
                        Report::Log(m) => peer.notify_logging_message(m).await,
                    };
                    if sent.is_err() {
                        break;
                    }
                }
            });
            *queue = Queue::Open(sender, task);
        }
        if let Queue::Open(sender, _) = &*queue {
            let full = matches!(
                sender.try_send(report),
                Err(mpsc::error::TrySendError::Full(_))
            );
            if full && !self.dropping.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    tool = %self.tool,
                    "the tool reports faster than its MCP client reads: reports past \
                     {QUEUED_REPORTS} waiting are left out"
                );
            }
        }
    }

    /// Closes the queue and waits until what it holds is sent.
    async fn close(&self) {
        let queue = {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *queue, Queue::Closed)
        };
        if let Queue::Open(sender, task) = queue {
            drop(sender);
            let _ = task.await;
        }
    }
}

/// What sends a call's last reports before its result: [`Flush::done`] once the tool is done.
pub(crate) struct Flush(Option<Arc<Reports>>);

impl Flush {
    /// Closes the call's reports and waits until those queued are sent.
    pub(crate) async fn done(self) {
        if let Some(reports) = self.0 {
            reports.close().await;
        }
    }
}

/// The sinks of one call: progress when the client gave a progress token, log messages when
/// it set a level (for this request in `_meta`, or for its session with `logging/setLevel`);
/// and what sends their last reports before the result.
pub(crate) fn sinks(
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    log_level: Option<LogLevel>,
    tool: &str,
) -> (Option<ProgressSink>, Option<LogSink>, Flush) {
    if progress_token.is_none() && log_level.is_none() {
        return (None, None, Flush(None));
    }
    let reports = Arc::new(Reports {
        peer,
        queue: Mutex::new(Queue::Idle),
        runtime: tokio::runtime::Handle::try_current().ok(),
        dropping: std::sync::atomic::AtomicBool::new(false),
        tool: tool.into(),
    });
    let flush = Flush(Some(reports.clone()));
    let progress = progress_token.map(|token| {
        let reports = reports.clone();
        Arc::new(move |p: Progress<'_>| {
            let mut update = ProgressNotificationParam::new(token.clone(), p.done);
            update.total = p.total;
            update.message = p.message.map(str::to_owned);
            reports.send(Report::Progress(update));
        }) as ProgressSink
    });
    let logger: Arc<str> = tool.into();
    let log = log_level.map(|lowest| {
        Arc::new(move |level: LogLevel, message: &str| {
            if level >= lowest {
                let m = LoggingMessageNotificationParam::new(
                    logging_level(level),
                    Value::String(message.to_owned()),
                )
                .with_logger(&*logger);
                reports.send(Report::Log(m));
            }
        }) as LogSink
    });
    (progress, log, flush)
}
