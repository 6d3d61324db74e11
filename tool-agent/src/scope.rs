//! The invocation scope: what the calls of one run share (the run's context, typed items,
//! references and their counter), reachable from any tool of the run through its context or
//! ambiently, without passing it down.

use std::any::Any;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tool_runtime::{Extensions, ToolContext};

use crate::citations::Reference;
use crate::context::RunContext;

tokio::task_local! {
    static SCOPE: InvocationScope;
}

/// What the calls of one run share. Each run begins its own; the calls of a run, however many
/// run at once, see that one, and other runs never do.
///
/// A tool reaches it two ways:
///
/// - through its context, [`InvocationScope::of`]`(ctx)`: the run attaches its scope to every
///   call as an extension ([`ToolContext::extension`]), so every kind of tool finds it: an
///   `async` or dynamic tool, a sync tool with its own time limit (run on tokio's blocking
///   pool), and a task the tool spawns with a [`ToolContext::to_static`] copy of its context;
/// - ambiently, [`InvocationScope::current`], while the tool runs on the run's task (a
///   `tokio::task_local!`): not on the blocking pool, nor in a spawned task.
///
/// Prefer the first; the second is for code that has no context at hand. Either way it is
/// cheap to clone: clones share one scope.
///
/// ```
/// use tool_agent::InvocationScope;
/// use tool_agent::citations::Reference;
/// use tool_runtime::ToolContext;
///
/// fn cite(ctx: &ToolContext<'_>) -> String {
///     match InvocationScope::of(ctx) {
///         Some(scope) => {
///             let n = scope.add_reference(Reference { title: "Q3 report".into(), link: None });
///             format!("Revenue grew 4% [doc:{n}].")
///         }
///         None => "Revenue grew 4%.".into(),
///     }
/// }
///
/// let scope = InvocationScope::default();
/// let ctx = ToolContext::detached("cite").with_extension(scope.clone());
/// assert_eq!(cite(&ctx), "Revenue grew 4% [doc:1].");
/// assert_eq!(scope.references()[&1].title, "Q3 report");
/// ```
#[derive(Clone, Default)]
pub struct InvocationScope {
    inner: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    context: RunContext,
    items: Mutex<Extensions>,
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

    /// The scope of the run this call belongs to: the one attached to the call's context, else
    /// the ambient one ([`InvocationScope::current`]); `None` outside a run.
    pub fn of(ctx: &ToolContext<'_>) -> Option<InvocationScope> {
        ctx.extension::<InvocationScope>()
            .cloned()
            .or_else(InvocationScope::current)
    }

    /// The scope of the run the calling task belongs to, if any. It is not seen on tokio's
    /// blocking pool nor in a task the tool spawned: [`InvocationScope::of`] is.
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

    /// How many reference numbers were given out.
    pub(crate) fn reference_count(&self) -> usize {
        self.inner.counter.load(Ordering::Relaxed)
    }

    /// Takes back the references of a run that was interrupted, and its counter, so that the
    /// numbers the model saw before keep their meaning and new ones follow them.
    pub(crate) fn restore(&self, references: BTreeMap<usize, Reference>, count: usize) {
        let count = count.max(references.keys().next_back().copied().unwrap_or(0));
        *lock(&self.inner.references) = references;
        self.inner.counter.store(count, Ordering::Relaxed);
    }

    /// Stores an item, replacing any item of the same type.
    pub fn insert<T: Any + Send + Sync>(&self, item: T) {
        lock(&self.inner.items).insert(item);
    }

    /// The item of type `T`, if one was stored.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        lock(&self.inner.items).get_arc::<T>()
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
    async fn of_prefers_the_contexts_scope_to_the_ambient_one() {
        let ctx = ToolContext::detached("t");
        assert!(
            InvocationScope::of(&ctx).is_none(),
            "no scope outside a run"
        );
        let attached = InvocationScope::new(RunContext::new().with(1u8));
        let ambient = InvocationScope::new(RunContext::new().with(2u8));
        let with_scope = ctx.clone().with_extension(attached);
        fn seen(ctx: &ToolContext<'_>) -> Option<u8> {
            InvocationScope::of(ctx).and_then(|s| s.context().get::<u8>().copied())
        }
        ambient
            .enter(async {
                assert_eq!(seen(&with_scope), Some(1));
                assert_eq!(
                    seen(&ctx),
                    Some(2),
                    "the ambient one, without an attached one"
                );
            })
            .await;
    }

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
