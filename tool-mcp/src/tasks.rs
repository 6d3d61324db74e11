//! Calls served as MCP tasks (the tasks extension, `io.modelcontextprotocol/tasks`, of protocol
//! 2026-07-28): a call of a tool marked `task` is answered at once with a task, runs on, and is
//! polled with `tasks/get` until it ends; `tasks/cancel` cancels it.
//!
//! The store is the server's, shared by every session and by every request that stands
//! alone (each served by a server of its own), so a task made by one request is found by the
//! next. Each task has 128 random bits as its id and, when it was made in a session, belongs
//! to that session. Tasks that ended are kept [`TaskLimits::kept_for`], at most
//! [`TaskLimits::max_kept`] in all (past it, new tasks are refused); running ones are bounded
//! by the server's call limits, whose permits they hold until they end.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{DetailedTask, ErrorData, JsonObject, Task, TaskPayload, TaskStatus};
use tokio_util::sync::CancellationToken;

/// How long ended tasks are kept, and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskLimits {
    /// The most tasks the server keeps, running and ended (default 1,024). Past it a call
    /// that would make another is refused (code -32000, to be tried later), naming this limit:
    /// no task's result is dropped before `kept_for` to make room.
    pub max_kept: usize,
    /// How long an ended task's result is kept for the client to fetch (default 5 minutes).
    pub kept_for: Duration,
    /// How often a client is asked to poll (`pollIntervalMs`; default 500 ms).
    pub poll_interval: Duration,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_kept: 1024,
            kept_for: Duration::from_secs(300),
            poll_interval: Duration::from_millis(500),
        }
    }
}

impl TaskLimits {
    /// These limits keeping at most `max` tasks.
    pub fn with_max_kept(mut self, max: usize) -> Self {
        self.max_kept = max;
        self
    }

    /// These limits keeping an ended task's result for `duration`.
    pub fn with_kept_for(mut self, duration: Duration) -> Self {
        self.kept_for = duration;
        self
    }

    /// These limits asking clients to poll every `interval`.
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }
}

/// One task the server keeps.
struct Entry {
    task: Task,
    /// What it ended with; `None` while it runs.
    ended: Option<(TaskPayload, Instant)>,
    /// Cancels its call.
    cancel: CancellationToken,
    /// The session that made it, when one did: no other may see it.
    owner: Option<String>,
}

/// The server's tasks.
pub(crate) struct TaskStore {
    entries: Mutex<HashMap<String, Entry>>,
    limits: TaskLimits,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("tasks", &self.entries().len())
            .field("limits", &self.limits)
            .finish()
    }
}

/// The answer to a task id this client has no task of: unknown, ended and dropped, or
/// another session's.
fn unknown(id: &str) -> ErrorData {
    let shown: String = id.chars().take(40).collect();
    ErrorData::invalid_params(
        format!("no task `{shown}` here: it never was, or ended and its result was dropped"),
        None,
    )
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl TaskStore {
    pub(crate) fn new(limits: TaskLimits) -> Self {
        TaskStore {
            entries: Mutex::default(),
            limits,
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // Every change under the lock is one insert, remove or field set: a panic elsewhere
        // leaves the map whole.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops the ended tasks kept long enough.
    fn sweep(&self, entries: &mut HashMap<String, Entry>, now: Instant) {
        let kept_for = self.limits.kept_for;
        entries.retain(|_, e| match &e.ended {
            Some((_, at)) => now.duration_since(*at) < kept_for,
            None => true,
        });
    }

    /// A new task, working, for `owner`, whose call may run `call_timeout`; its cancellation
    /// token. Refused (the caller answers with `busy`) when every task kept is running and
    /// there is no room for another.
    pub(crate) fn create(
        &self,
        owner: Option<String>,
        call_timeout: Duration,
    ) -> Result<(Task, CancellationToken), String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| format!("no random task id: {e}"))?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let now = Instant::now();
        let mut entries = self.entries();
        self.sweep(&mut entries, now);
        // Full: refused, not made room for. An ended task's result is its client's until
        // `kept_for` has passed; dropping it early for another client's task would lose it.
        if entries.len() >= self.limits.max_kept {
            return Err(format!(
                "too many tasks kept: {} (TaskLimits::max_kept), running or with results not \
                 yet fetched; try again later",
                self.limits.max_kept
            ));
        }
        let stamp = rmcp::task_manager::current_timestamp();
        let task = Task::new(id.clone(), TaskStatus::Working, stamp.clone(), stamp)
            .with_ttl_ms(millis(call_timeout.saturating_add(self.limits.kept_for)))
            .with_poll_interval_ms(millis(self.limits.poll_interval));
        let cancel = CancellationToken::new();
        entries.insert(
            id,
            Entry {
                task: task.clone(),
                ended: None,
                cancel: cancel.clone(),
                owner,
            },
        );
        Ok((task, cancel))
    }

    /// Records what task `id` ended with.
    pub(crate) fn finish(&self, id: &str, payload: TaskPayload) {
        if let Some(entry) = self.entries().get_mut(id) {
            entry.task.status = payload.status();
            entry.task.last_updated_at = rmcp::task_manager::current_timestamp();
            entry.ended = Some((payload, Instant::now()));
        }
    }

    /// Says, in the task's status message, what its call reports (its progress).
    pub(crate) fn report(&self, id: &str, message: String) {
        if let Some(entry) = self.entries().get_mut(id) {
            if entry.ended.is_none() {
                entry.task.status_message = Some(message);
                entry.task.last_updated_at = rmcp::task_manager::current_timestamp();
            }
        }
    }

    /// Task `id` as `owner` may see it.
    pub(crate) fn get(&self, id: &str, owner: Option<&str>) -> Result<DetailedTask, ErrorData> {
        let mut entries = self.entries();
        self.sweep(&mut entries, Instant::now());
        let entry = entries
            .get(id)
            .filter(|e| e.owner.is_none() || e.owner.as_deref() == owner)
            .ok_or_else(|| unknown(id))?;
        let payload = match &entry.ended {
            Some((payload, _)) => payload.clone(),
            None => TaskPayload::Working,
        };
        Ok(DetailedTask::new(entry.task.clone(), payload))
    }

    /// Asks task `id`'s call to stop; it ends as cancelled, or with its result should it
    /// finish first.
    pub(crate) fn cancel(&self, id: &str, owner: Option<&str>) -> Result<(), ErrorData> {
        let entries = self.entries();
        let entry = entries
            .get(id)
            .filter(|e| e.owner.is_none() || e.owner.as_deref() == owner)
            .ok_or_else(|| unknown(id))?;
        entry.cancel.cancel();
        Ok(())
    }

    /// How many tasks are kept (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries().len()
    }
}

/// Records a task's end: what its call gave, or, should the call's future go without one (a
/// panic outside the tool's guard, the runtime shutting down), `failed`, so that the task is
/// not polled for ever.
pub(crate) struct Finishing {
    store: std::sync::Arc<TaskStore>,
    id: String,
    done: bool,
}

impl Finishing {
    pub(crate) fn new(store: std::sync::Arc<TaskStore>, id: String) -> Self {
        Finishing {
            store,
            id,
            done: false,
        }
    }

    /// The task ended with `payload`.
    pub(crate) fn finish(mut self, payload: TaskPayload) {
        self.store.finish(&self.id, payload);
        self.done = true;
    }
}

impl Drop for Finishing {
    fn drop(&mut self) {
        if !self.done {
            let failed = failed("the task's call ended without a result");
            self.store.finish(&self.id, failed);
        }
    }
}

/// A call's progress report as a task's status message: `3/10: copying` (or `3`, `copying`).
pub(crate) fn progress_text(progress: &tool_runtime::Progress<'_>) -> String {
    let amount = match progress.total {
        Some(total) => format!("{}/{}", progress.done, total),
        None => progress.done.to_string(),
    };
    match progress.message {
        Some(message) => format!("{amount}: {message}"),
        None => amount,
    }
}

/// A finished call's result as a task's payload.
pub(crate) fn completed(result: &rmcp::model::CallToolResult) -> TaskPayload {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(result)) => TaskPayload::Completed { result },
        _ => failed("the call's result could not be written as JSON"),
    }
}

/// A task that failed for `why`, as an internal error (`-32603`).
fn failed(why: &str) -> TaskPayload {
    let mut error = JsonObject::new();
    error.insert("code".into(), (-32603).into());
    error.insert("message".into(), why.into());
    TaskPayload::Failed { error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_a_task_is_refused_until_an_ended_one_has_been_kept_its_time() {
        let limits = TaskLimits::default()
            .with_max_kept(2)
            .with_kept_for(Duration::from_millis(30));
        let store = TaskStore::new(limits);
        let (first, _) = store.create(None, Duration::ZERO).unwrap();
        let (second, _) = store.create(None, Duration::ZERO).unwrap();
        let refused = store.create(None, Duration::ZERO).unwrap_err();
        assert!(refused.contains("TaskLimits::max_kept"), "{refused}");
        store.finish(&first.task_id, TaskPayload::Cancelled);
        // Ended, but its result is still its client's.
        assert!(store.create(None, Duration::ZERO).is_err());
        assert!(store.get(&first.task_id, None).is_ok());
        std::thread::sleep(Duration::from_millis(60));
        let (third, _) = store.create(None, Duration::ZERO).unwrap();
        assert!(store.get(&first.task_id, None).is_err());
        assert!(store.get(&second.task_id, None).is_ok());
        assert!(store.get(&third.task_id, None).is_ok());
        assert_eq!(store.len(), 2);
        assert_eq!(first.task_id.len(), 32);
    }

    #[test]
    fn a_sessions_task_is_hidden_from_another_and_an_ended_one_expires() {
        let store = TaskStore::new(TaskLimits::default().with_kept_for(Duration::from_millis(30)));
        let (task, cancel) = store.create(Some("s1".into()), Duration::ZERO).unwrap();
        let id = &task.task_id;
        assert!(store.get(id, Some("s2")).is_err());
        assert!(store.get(id, None).is_err());
        assert!(store.cancel(id, Some("s2")).is_err());
        assert!(!cancel.is_cancelled());
        store.cancel(id, Some("s1")).unwrap();
        assert!(cancel.is_cancelled());
        store.finish(id, TaskPayload::Cancelled);
        assert_eq!(
            store.get(id, Some("s1")).unwrap().status(),
            TaskStatus::Cancelled
        );
        std::thread::sleep(Duration::from_millis(60));
        assert!(store.get(id, Some("s1")).is_err());
    }
}
