//! Where interrupted runs wait: the [`RunStore`] contract, and what it hands out.
//!
//! A run stopped for approvals or external results ([`Interruption`](crate::Interruption))
//! is saved under an owner (a user, a conversation: whoever may decide), listed while it
//! waits, and taken back exactly once to be resumed. Two replicas taking the same run race:
//! one gets the state, the other [`RunStoreError::Taken`]. A run not taken before its time to
//! live is gone ([`RunStoreError::Expired`]).
//!
//! [`MemoryRunStore`](crate::MemoryRunStore) keeps runs in the process;
//! `PgRunStore` (feature `postgres`) in a PostgreSQL table that several replicas share.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::{PendingApproval, RunState};

/// The name a store gives a saved run: 128 random bits, in hex. Whoever holds it and the
/// run's owner may take the run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// A new id: 16 bytes from the operating system's random source.
    pub(crate) fn random() -> Result<Self, RunStoreError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| RunStoreError::store(format!("no random run id: {e}")))?;
        Ok(RunId(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// An id as given back by a user (from a URL, a form): any text; one no store gave out
    /// is simply not found.
    pub fn new(id: impl Into<String>) -> Self {
        RunId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run waiting in a store, as listed: what waits, not the whole state.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedRun {
    /// Its id, for [`RunStore::take`].
    pub id: RunId,
    /// The calls that wait for a decision or a result.
    pub pending: Vec<PendingApproval>,
    /// When it was saved.
    pub saved_at: SystemTime,
    /// When it stops waiting.
    pub expires_at: SystemTime,
}

/// How much a store holds. An owner is whoever a user of the store lets save runs (often one
/// per signed-in person): without caps, one could fill the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStoreLimits {
    /// The most bytes of one state, as JSON (default 8 MiB: a long transcript with a few
    /// attachments).
    pub max_state_bytes: usize,
    /// The most runs one owner has waiting at once (default 100); [`RunStore::pending`] lists
    /// at most this many.
    pub max_runs_per_owner: usize,
    /// The most runs waiting in the store, all owners together (default 10,000).
    pub max_runs: usize,
    /// The longest time to live a save may ask for (default 30 days).
    pub max_ttl: Duration,
}

impl Default for RunStoreLimits {
    fn default() -> Self {
        RunStoreLimits {
            max_state_bytes: 8 * 1024 * 1024,
            max_runs_per_owner: 100,
            max_runs: 10_000,
            max_ttl: Duration::from_secs(30 * 24 * 60 * 60),
        }
    }
}

impl RunStoreLimits {
    /// The state as JSON, refused past `max_state_bytes`; the time to live, refused when zero
    /// or past `max_ttl`.
    pub(crate) fn admit(&self, state: &RunState, ttl: Duration) -> Result<String, RunStoreError> {
        if ttl.is_zero() || ttl > self.max_ttl {
            return Err(RunStoreError::Refused(format!(
                "a time to live of {ttl:?} is outside (0, {:?}] (RunStoreLimits::max_ttl)",
                self.max_ttl
            )));
        }
        let json = serde_json::to_string(state)
            .map_err(|e| RunStoreError::store(format!("writing the run state as JSON: {e}")))?;
        if json.len() > self.max_state_bytes {
            return Err(RunStoreError::Refused(format!(
                "the run state is {} bytes as JSON, over the store's cap of {} \
                 (RunStoreLimits::max_state_bytes)",
                json.len(),
                self.max_state_bytes
            )));
        }
        Ok(json)
    }

    /// Refuses one save too many: `owned` runs wait for `owner`, `all` in the store.
    pub(crate) fn check_room(
        &self,
        owner: &str,
        owned: usize,
        all: usize,
    ) -> Result<(), RunStoreError> {
        if owned >= self.max_runs_per_owner {
            return Err(RunStoreError::Refused(format!(
                "owner `{owner}` has {owned} runs waiting, the store's cap \
                 (RunStoreLimits::max_runs_per_owner): take some or let them expire first"
            )));
        }
        if all >= self.max_runs {
            return Err(RunStoreError::Refused(format!(
                "{all} runs wait in the store, its cap (RunStoreLimits::max_runs)"
            )));
        }
        Ok(())
    }
}

/// Why a store did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum RunStoreError {
    /// No run of that id waits for that owner: never saved, saved for another owner, or
    /// expired and purged.
    #[error("no run `{0}` waits for this owner (never saved here, or expired and purged)")]
    NotFound(RunId),
    /// The run was taken already (resumed elsewhere, perhaps by another replica).
    #[error("run `{0}` was taken already: it is being resumed elsewhere")]
    Taken(RunId),
    /// The run's time to live ended before it was taken.
    #[error("run `{0}` expired before it was taken")]
    Expired(RunId),
    /// A save over a cap of [`RunStoreLimits`], or a time to live out of bounds.
    #[error("{0}")]
    Refused(String),
    /// The store failed (a database error, a state that does not read back).
    #[error("run store: {message}")]
    Store {
        /// What was being done, and what went wrong.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl RunStoreError {
    pub(crate) fn store(message: impl Into<String>) -> Self {
        RunStoreError::Store {
            message: message.into(),
            source: None,
        }
    }
}

/// What a store's methods return.
pub type RunStoreFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, RunStoreError>> + Send + 'a>>;

/// Where interrupted runs wait for their decisions.
///
/// ```
/// # async fn demo(agent: &tool_agent::Agent, interruption: tool_agent::Interruption)
/// #     -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use tool_agent::{MemoryRunStore, RunStore};
///
/// let store = MemoryRunStore::new();
/// // The run stopped: keep its state for a day, under the person who decides.
/// let id = store.save("ada", &interruption.state, Duration::from_secs(86_400)).await?;
/// // Later, perhaps in another process: what waits for Ada, and her decisions.
/// let waiting = store.pending("ada").await?;
/// let state = store.take("ada", &id).await?; // once: a second take is `Taken`
/// let decisions: Vec<_> = state.pending().map(|call| call.approve()).collect();
/// let result = agent.resume(state, &decisions, &Default::default()).await;
/// # let _ = (waiting, result);
/// # Ok(()) }
/// ```
pub trait RunStore: Send + Sync {
    /// Saves `state` for `owner`, to wait at most `ttl`, and returns its new id.
    fn save<'a>(
        &'a self,
        owner: &'a str,
        state: &'a RunState,
        ttl: Duration,
    ) -> RunStoreFuture<'a, RunId>;

    /// The runs that wait for `owner`, oldest first (expired and taken ones left out).
    fn pending<'a>(&'a self, owner: &'a str) -> RunStoreFuture<'a, Vec<SavedRun>>;

    /// Takes the run `id` of `owner` out of the store, once: a second take, here or in
    /// another process sharing the store, is [`RunStoreError::Taken`]; an expired run is
    /// [`RunStoreError::Expired`].
    fn take<'a>(&'a self, owner: &'a str, id: &'a RunId) -> RunStoreFuture<'a, RunState>;

    /// Deletes what expired (runs never taken, and the marks of runs taken) and returns how
    /// many. Saves purge their owner's expired runs themselves; run this now and then to
    /// purge the rest.
    fn purge_expired(&self) -> RunStoreFuture<'_, usize>;
}
