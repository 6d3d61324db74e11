//! The sync tools' share of tokio's blocking pool: at most so many of their calls hold a
//! blocking thread at once, so that stuck tools (a sync call that outlived its time limit
//! keeps its thread: a thread cannot be stopped) never take every thread from DNS lookups and
//! file reads. The calls past the cap wait for a slot, within their time limit.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The default of [`ExecutorBuilder::max_blocking_calls`](crate::ExecutorBuilder::max_blocking_calls):
/// an eighth of tokio's blocking pool (512 threads).
pub const DEFAULT_MAX_BLOCKING_CALLS: usize = 64;

/// What the executor's calls hold now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExecutorMetrics {
    /// Sync tools' calls holding a blocking thread, at most
    /// [`ExecutorMetrics::max_blocking_calls`].
    pub blocking_calls: usize,
    /// Of those, the calls whose caller stopped waiting (a time limit passed, or the call was
    /// cancelled) but whose tool still runs: each keeps its thread until the tool returns.
    pub abandoned_blocking_calls: usize,
    /// The cap on `blocking_calls`.
    pub max_blocking_calls: usize,
}

/// The slots sync tools' calls take on the blocking pool.
pub(crate) struct BlockingSlots {
    slots: Arc<Semaphore>,
    max: usize,
    abandoned: Arc<AtomicUsize>,
}

impl BlockingSlots {
    pub(crate) fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        BlockingSlots {
            slots: Arc::new(Semaphore::new(max)),
            max,
            abandoned: Arc::default(),
        }
    }

    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Waits for a slot. (`None` only if the semaphore were closed, which it never is.)
    pub(crate) async fn take(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.slots).acquire_owned().await.ok()
    }

    /// A watch on one call: [`Watch::finished`] from the thread, and dropped by the waiter.
    pub(crate) fn watch(&self) -> (Watch, Waiter) {
        let state = Arc::new(AtomicU8::new(RUNNING));
        let watch = Watch {
            state: Arc::clone(&state),
            abandoned: Arc::clone(&self.abandoned),
        };
        let waiter = Waiter {
            state,
            abandoned: Arc::clone(&self.abandoned),
        };
        (watch, waiter)
    }

    pub(crate) fn metrics(&self) -> ExecutorMetrics {
        ExecutorMetrics {
            blocking_calls: self.max - self.slots.available_permits(),
            abandoned_blocking_calls: self.abandoned.load(Ordering::Acquire),
            max_blocking_calls: self.max,
        }
    }
}

const RUNNING: u8 = 0;
const ABANDONED: u8 = 1;
const DONE: u8 = 2;

/// The thread's side of a call: says when the tool has returned.
pub(crate) struct Watch {
    state: Arc<AtomicU8>,
    abandoned: Arc<AtomicUsize>,
}

impl Drop for Watch {
    /// The tool has returned (or panicked): a call its caller left stops being counted.
    fn drop(&mut self) {
        if self.state.swap(DONE, Ordering::AcqRel) == ABANDONED {
            self.abandoned.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The caller's side of a call: dropped before the tool returned, the call is abandoned.
pub(crate) struct Waiter {
    state: Arc<AtomicU8>,
    abandoned: Arc<AtomicUsize>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Counted before the call is marked abandoned, and uncounted when the tool had already
        // returned: the count never goes below zero, even for a moment.
        self.abandoned.fetch_add(1, Ordering::AcqRel);
        let left =
            self.state
                .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire);
        if left.is_err() {
            self.abandoned.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
