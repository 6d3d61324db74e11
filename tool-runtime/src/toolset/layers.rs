//! The layers that come with toolsets: [`CallLog`], [`RateLimit`], [`ConcurrencyLimit`] and
//! [`ResultCache`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Semaphore;
use tool_core::{Content, ToolError, ToolOutput, ToolSpec};

use super::layer::{LayerFuture, Next, ToolLayer};
use crate::ToolContext;

/// Logs every call of the set through `tracing`, at `info`: the tool, how long it took and how
/// it ended (`ok`, or the error's kind). Never the arguments nor the result, which may hold
/// secrets.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallLog;

impl ToolLayer for CallLog {
    fn call(
        &self,
        _: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture {
        Box::pin(async move {
            let tool: Arc<str> = ctx.tool_name().into();
            let call_id = ctx.call_id().map(str::to_owned);
            let started = Instant::now();
            let result = next.run(args, ctx).await;
            let millis = started.elapsed().as_secs_f64() * 1e3;
            match &result {
                Ok(out) if out.is_error => {
                    tracing::info!(tool = %tool, call_id, millis, outcome = "error_result", "tool call")
                }
                Ok(_) => tracing::info!(tool = %tool, call_id, millis, outcome = "ok", "tool call"),
                Err(e) => {
                    let kind = format!("{:?}", e.kind());
                    tracing::info!(tool = %tool, call_id, millis, outcome = %kind, "tool call")
                }
            }
            result
        })
    }
}

/// At most `calls` calls of the set's tools per `per`, in all, as a token bucket: up to
/// `calls` at once, then one more each `per / calls`. A call over it is not run: it fails at
/// once with a [`RateLimited`] error that says when to try again, which a model can act on.
#[derive(Debug, Clone)]
pub struct RateLimit {
    calls: u32,
    per: Duration,
    bucket: Arc<Mutex<Bucket>>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Why a [`RateLimit`] refused a call (in [`ToolError::Failed`], found with
/// [`ToolError::downcast_ref`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the rate limit of {calls} calls per {per:?} is reached; try again in {:.1} s",
    retry_after.as_secs_f64()
)]
pub struct RateLimited {
    /// The limit's calls.
    pub calls: u32,
    /// The limit's period.
    pub per: Duration,
    /// When a call would be let through.
    pub retry_after: Duration,
}

impl RateLimit {
    /// At most `calls` calls per `per` (at least one call, and a period of at least a
    /// millisecond).
    pub fn new(calls: u32, per: Duration) -> Self {
        let calls = calls.max(1);
        RateLimit {
            calls,
            per: per.max(Duration::from_millis(1)),
            bucket: Arc::new(Mutex::new(Bucket {
                tokens: f64::from(calls),
                at: Instant::now(),
            })),
        }
    }

    /// Takes a token, or says how long until there is one.
    fn take(&self) -> Result<(), Duration> {
        let rate = f64::from(self.calls) / self.per.as_secs_f64();
        let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let refilled = bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = refilled.min(f64::from(self.calls));
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
    }
}

impl ToolLayer for RateLimit {
    fn call(
        &self,
        _: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture {
        match self.take() {
            Ok(()) => Box::pin(next.run(args, ctx)),
            Err(retry_after) => {
                let refused = RateLimited {
                    calls: self.calls,
                    per: self.per,
                    retry_after,
                };
                let error = ToolError::failed(ctx.tool_name(), refused);
                Box::pin(async move { Err(error) })
            }
        }
    }
}

/// At most this many calls of the set's tools run at once; the others wait their turn, under
/// their time limit and cancellation.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit {
    slots: Arc<Semaphore>,
}

impl ConcurrencyLimit {
    /// At most `calls` at once (at least one).
    pub fn new(calls: usize) -> Self {
        ConcurrencyLimit {
            slots: Arc::new(Semaphore::new(calls.clamp(1, Semaphore::MAX_PERMITS))),
        }
    }
}

impl ToolLayer for ConcurrencyLimit {
    fn call(
        &self,
        _: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture {
        let slots = Arc::clone(&self.slots);
        Box::pin(async move {
            // The semaphore is never closed, so acquiring fails only if it were.
            let _slot = slots
                .acquire_owned()
                .await
                .map_err(|_| ToolError::Misconfigured {
                    tool: ctx.tool_name().to_owned(),
                    message: "the concurrency limit's semaphore is closed".to_owned(),
                })?;
            next.run(args, ctx).await
        })
    }
}

/// What a cached result's key adds to the tool's name and arguments: the caller, for results
/// that differ by caller.
type ScopeOf = Arc<dyn Fn(&ToolContext<'_>) -> Option<String> + Send + Sync>;

/// Keeps the results of the set's idempotent or read-only tools (by their hints) for a time,
/// and answers a call with the same name and arguments from it, without running the tool.
/// Only successful results are kept, each up to [`max_entry_bytes`](Self::max_entry_bytes),
/// and [`max_entries`](Self::max_entries) of them (the oldest go first).
///
/// Two constructors, so that the choice is written where the cache is made:
/// [`shared`](Self::shared) answers every caller from one cache, right for tools whose result
/// does not depend on who asks; [`per`](Self::per) keys each result by the caller too (a user
/// id from the call's extensions), so one user's result never answers another.
#[derive(Clone)]
pub struct ResultCache {
    ttl: Duration,
    scope: Option<ScopeOf>,
    max_entries: usize,
    max_entry_bytes: usize,
    kept: Arc<Mutex<Kept>>,
}

#[derive(Default)]
struct Kept {
    entries: HashMap<String, (Instant, ToolOutput)>,
    /// Keys in the order they were kept, for eviction.
    order: VecDeque<String>,
}

/// How many results a [`ResultCache`] keeps by default.
pub const DEFAULT_CACHE_ENTRIES: usize = 1_000;
/// How large a result a [`ResultCache`] keeps by default, in bytes.
pub const DEFAULT_CACHE_ENTRY_BYTES: usize = 64 * 1024;

impl ResultCache {
    /// One cache for every caller, results kept for `ttl`.
    pub fn shared(ttl: Duration) -> Self {
        ResultCache {
            ttl,
            scope: None,
            max_entries: DEFAULT_CACHE_ENTRIES,
            max_entry_bytes: DEFAULT_CACHE_ENTRY_BYTES,
            kept: Arc::default(),
        }
    }

    /// Results kept for `ttl` per caller: `scope` names the caller from the call's context
    /// (its extensions, say). A call for which it gives `None` is not cached at all.
    pub fn per(
        ttl: Duration,
        scope: impl Fn(&ToolContext<'_>) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        ResultCache {
            scope: Some(Arc::new(scope)),
            ..ResultCache::shared(ttl)
        }
    }

    /// At most this many results kept ([`DEFAULT_CACHE_ENTRIES`] by default).
    pub fn max_entries(mut self, entries: usize) -> Self {
        self.max_entries = entries;
        self
    }

    /// Results larger than this many bytes (text, image data and structured JSON) are not
    /// kept ([`DEFAULT_CACHE_ENTRY_BYTES`] by default).
    pub fn max_entry_bytes(mut self, bytes: usize) -> Self {
        self.max_entry_bytes = bytes;
        self
    }

    /// How many results are kept now, stale ones included until they are met or pushed out.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no result is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn key(&self, ctx: &ToolContext<'_>, args: &Value) -> Option<String> {
        let scope = match &self.scope {
            Some(scope) => scope(ctx)?,
            None => String::new(),
        };
        // The length prefixes keep the parts apart whatever they hold.
        let tool = ctx.tool_name();
        let args = tool_core::canonical_json(args);
        Some(format!(
            "{}:{scope}{}:{tool}{args}",
            scope.len(),
            tool.len()
        ))
    }

    fn cached(&self, key: &str) -> Option<ToolOutput> {
        let mut kept = self.lock();
        match kept.entries.get(key) {
            Some((at, out)) if at.elapsed() < self.ttl => Some(out.clone()),
            Some(_) => {
                kept.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn keep(&self, key: String, out: &ToolOutput) {
        if self.max_entries == 0 || size_of_output(out) > self.max_entry_bytes {
            return;
        }
        let mut kept = self.lock();
        if kept
            .entries
            .insert(key.clone(), (Instant::now(), out.clone()))
            .is_none()
        {
            kept.order.push_back(key);
        }
        while kept.entries.len() > self.max_entries {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            kept.entries.remove(&oldest);
        }
        // Keys of entries removed as stale linger in `order`; drop them when they outnumber
        // the entries, so the queue stays bounded too.
        if kept.order.len() > 2 * self.max_entries.max(1) {
            let Kept { entries, order } = &mut *kept;
            order.retain(|key| entries.contains_key(key));
        }
    }
}

impl std::fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultCache")
            .field("ttl", &self.ttl)
            .field("per_caller", &self.scope.is_some())
            .field("max_entries", &self.max_entries)
            .field("max_entry_bytes", &self.max_entry_bytes)
            .finish_non_exhaustive()
    }
}

impl ToolLayer for ResultCache {
    fn call(
        &self,
        spec: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture {
        let hints = &spec.metadata.hints;
        let repeatable = hints.idempotent == Some(true) || hints.read_only == Some(true);
        let key = repeatable.then(|| self.key(&ctx, &args)).flatten();
        let Some(key) = key else {
            return Box::pin(next.run(args, ctx));
        };
        if let Some(out) = self.cached(&key) {
            return Box::pin(async move { Ok(out) });
        }
        let cache = self.clone();
        Box::pin(async move {
            let result = next.run(args, ctx).await;
            if let Ok(out) = &result {
                if !out.is_error {
                    cache.keep(key, out);
                }
            }
            result
        })
    }
}

/// A result's size: its text, its attachments ([`Content::byte_len`]) and its structured JSON.
fn size_of_output(out: &ToolOutput) -> usize {
    let content: usize = out.content.iter().map(Content::byte_len).sum();
    let structured = out
        .structured
        .as_ref()
        .map_or(0, |v| serde_json::to_vec(v).map_or(usize::MAX, |b| b.len()));
    content.saturating_add(structured)
}
