//! A [`RunStore`] in the process's memory: for one process, and for tests.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::run_store::{RunId, RunStore, RunStoreError, RunStoreFuture, RunStoreLimits, SavedRun};
use crate::RunState;

/// Runs waiting in this process's memory, gone when it ends. Several replicas need a store
/// they share (`PgRunStore`, feature `postgres`).
#[derive(Debug, Default)]
pub struct MemoryRunStore {
    runs: Mutex<HashMap<RunId, Entry>>,
    limits: RunStoreLimits,
}

/// How long a taken run's mark stays, so that a second take is told `Taken`.
const TAKEN_KEPT: Duration = Duration::from_secs(600);

#[derive(Debug)]
struct Entry {
    owner: String,
    /// `None` once taken: the mark stays until the run would have expired, so that a second
    /// take is told `Taken`.
    state: Option<RunState>,
    saved_at: SystemTime,
    expires_at: SystemTime,
}

impl Entry {
    fn waits(&self, now: SystemTime) -> bool {
        self.state.is_some() && self.expires_at > now
    }
}

impl MemoryRunStore {
    /// An empty store with the default limits.
    pub fn new() -> Self {
        MemoryRunStore::default()
    }

    /// An empty store with these limits.
    pub fn with_limits(limits: RunStoreLimits) -> Self {
        MemoryRunStore {
            runs: Mutex::default(),
            limits,
        }
    }

    fn runs(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, Entry>> {
        // A panic while the map was held leaves it whole: every change is one insert or one
        // field set.
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn save_now(
        &self,
        owner: &str,
        state: &RunState,
        ttl: Duration,
    ) -> Result<RunId, RunStoreError> {
        // Checked as the other stores check it: the state must be one they could hold.
        self.limits.admit(state, ttl)?;
        let now = SystemTime::now();
        let mut runs = self.runs();
        runs.retain(|_, entry| entry.expires_at > now);
        let owned = runs
            .values()
            .filter(|e| e.owner == owner && e.waits(now))
            .count();
        let all = runs.values().filter(|e| e.waits(now)).count();
        self.limits.check_room(owner, owned, all)?;
        let id = RunId::random()?;
        runs.insert(
            id.clone(),
            Entry {
                owner: owner.to_owned(),
                state: Some(state.clone()),
                saved_at: now,
                expires_at: now + ttl,
            },
        );
        Ok(id)
    }

    fn take_now(&self, owner: &str, id: &RunId) -> Result<RunState, RunStoreError> {
        let now = SystemTime::now();
        let mut runs = self.runs();
        let Some(entry) = runs.get_mut(id).filter(|e| e.owner == owner) else {
            return Err(RunStoreError::NotFound(id.clone()));
        };
        if entry.expires_at <= now {
            runs.remove(id);
            return Err(RunStoreError::Expired(id.clone()));
        }
        let state = entry
            .state
            .take()
            .ok_or_else(|| RunStoreError::Taken(id.clone()))?;
        // The mark that says `Taken` stays ten minutes, then goes with the next purge.
        entry.expires_at = entry.expires_at.min(now + TAKEN_KEPT);
        Ok(state)
    }
}

impl RunStore for MemoryRunStore {
    fn save<'a>(
        &'a self,
        owner: &'a str,
        state: &'a RunState,
        ttl: Duration,
    ) -> RunStoreFuture<'a, RunId> {
        Box::pin(async move { self.save_now(owner, state, ttl) })
    }

    fn pending<'a>(&'a self, owner: &'a str) -> RunStoreFuture<'a, Vec<SavedRun>> {
        let now = SystemTime::now();
        let mut waiting: Vec<SavedRun> = self
            .runs()
            .iter()
            .filter(|(_, e)| e.owner == owner && e.waits(now))
            .filter_map(|(id, e)| {
                Some(SavedRun {
                    id: id.clone(),
                    pending: e.state.as_ref()?.pending().cloned().collect(),
                    saved_at: e.saved_at,
                    expires_at: e.expires_at,
                })
            })
            .collect();
        waiting.sort_by(|a, b| a.saved_at.cmp(&b.saved_at).then(a.id.cmp(&b.id)));
        waiting.truncate(self.limits.max_runs_per_owner);
        Box::pin(async move { Ok(waiting) })
    }

    fn take<'a>(&'a self, owner: &'a str, id: &'a RunId) -> RunStoreFuture<'a, RunState> {
        Box::pin(async move { self.take_now(owner, id) })
    }

    fn purge_expired(&self) -> RunStoreFuture<'_, usize> {
        let now = SystemTime::now();
        let mut runs = self.runs();
        let before = runs.len();
        runs.retain(|_, entry| entry.expires_at > now);
        let purged = before - runs.len();
        Box::pin(async move { Ok(purged) })
    }
}
