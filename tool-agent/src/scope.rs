//! The invocation scope: what the calls of one run share (the run's context, typed items,
//! references and their counter), reachable from any tool of the run without passing it down.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::citations::Reference;
use crate::context::RunContext;

tokio::task_local! {
    static SCOPE: InvocationScope;
}

/// What the calls of one run share. Each run begins its own; the calls of a run, however many
/// run at once, see that one, and other runs never do.
///
/// A tool reaches it with [`InvocationScope::current`] while it runs on the run's task: an
/// `async` tool, a dynamic tool, or a sync tool without a time limit. A sync tool with its own
/// time limit runs on tokio's blocking pool, and a task a tool spawns is another task: neither
/// sees the scope (pass it along: it is cheap to clone).
///
/// ```
/// use tool_agent::InvocationScope;
/// use tool_agent::citations::Reference;
///
/// // In a tool:
/// if let Some(scope) = InvocationScope::current() {
///     let n = scope.add_reference(Reference { title: "Q3 report".into(), link: None });
///     // ... and the tool's output cites it as [doc:n].
///     # let _ = n;
/// }
/// ```
#[derive(Clone, Default)]
pub struct InvocationScope {
    inner: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    context: RunContext,
    items: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    references: Mutex<BTreeMap<usize, Reference>>,
    counter: AtomicUsize,
}

impl InvocationScope {
    /// A scope for a run with this context.
    pub fn new(context: RunContext) -> Self {
        InvocationScope {
            inner: Arc::new(Shared {
                context,
                ..Shared::default()
            }),
        }
    }

    /// The scope of the run the calling task belongs to, if any.
    pub fn current() -> Option<InvocationScope> {
        SCOPE.try_with(InvocationScope::clone).ok()
    }

    /// Runs `future` inside this scope: [`InvocationScope::current`] gives it.
    pub async fn enter<F: Future>(self, future: F) -> F::Output {
        SCOPE.scope(self, future).await
    }

    /// The run's context (what the purpose gates read).
    pub fn context(&self) -> &RunContext {
        &self.inner.context
    }

    /// The next reference number of the run: 1, 2, 3..., never the same twice, whichever call
    /// asks.
    pub fn next_reference_index(&self) -> usize {
        self.inner.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records a reference under the next number, and returns the number to cite it by
    /// (`[doc:N]`).
    pub fn add_reference(&self, reference: Reference) -> usize {
        let index = self.next_reference_index();
        lock(&self.inner.references).insert(index, reference);
        index
    }

    /// The references recorded so far, by number.
    pub fn references(&self) -> BTreeMap<usize, Reference> {
        lock(&self.inner.references).clone()
    }

    /// Stores an item, replacing any item of the same type.
    pub fn insert<T: Any + Send + Sync>(&self, item: T) {
        lock(&self.inner.items).insert(TypeId::of::<T>(), Arc::new(item));
    }

    /// The item of type `T`, if one was stored.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let item = lock(&self.inner.items).get(&TypeId::of::<T>()).cloned()?;
        item.downcast().ok()
    }
}

/// The lock, whether or not a panicking tool poisoned it: every critical section is one
/// insert or one read, so the data stays consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl std::fmt::Debug for InvocationScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InvocationScope")
            .field("context", &self.inner.context)
            .field("references", &lock(&self.inner.references).len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn current_is_the_entered_scope_and_none_outside() {
        assert!(InvocationScope::current().is_none());
        let scope = InvocationScope::new(RunContext::new().with(7u32));
        scope
            .clone()
            .enter(async {
                let current = InvocationScope::current().expect("inside");
                assert_eq!(current.context().get::<u32>(), Some(&7));
                current.insert(String::from("shared"));
            })
            .await;
        assert_eq!(
            scope.get::<String>().as_deref().map(String::as_str),
            Some("shared")
        );
        assert_eq!(scope.next_reference_index(), 1);
        let n = scope.add_reference(Reference {
            title: "t".into(),
            link: None,
        });
        assert_eq!(n, 2);
        assert_eq!(scope.references().keys().copied().collect::<Vec<_>>(), [2]);
    }
}
