//! Values found by type: what a caller attaches to one call, and the one map of values by type
//! that [`Services`](crate::Services) are kept in too.

use std::any::{Any, TypeId};
use std::sync::Arc;

/// Values attached to one call by its caller, found by type: what a caller knows about the
/// request that the executor does not (an agent's invocation scope, a user, a tenant).
///
/// Set them with [`CallOptions::with_extension`](crate::CallOptions::with_extension); a tool reads
/// them with [`ToolContext::extension`](crate::ToolContext::extension), whether it runs in place,
/// on the blocking pool or in a task it spawned with a
/// [`ToolContext::to_static`](crate::ToolContext::to_static) copy. Unlike
/// [`Services`](crate::Services), which are given once to the executor, extensions belong to
/// one call (or one batch of calls).
///
/// Empty extensions allocate nothing; cloning any costs one reference count, and values are
/// shared, never copied. One value per type: inserting a second replaces the first.
///
/// ```
/// use tool_runtime::Extensions;
///
/// struct Tenant(&'static str);
///
/// let mut extensions = Extensions::new();
/// extensions.insert(Tenant("acme"));
/// assert_eq!(extensions.get::<Tenant>().map(|t| t.0), Some("acme"));
/// assert!(extensions.get::<u32>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    /// `None` while empty. A list, not a map: a call carries a handful of values at most, and
    /// comparing a few type ids beats hashing one.
    values: Option<Arc<Vec<Entry>>>,
}

#[derive(Clone)]
struct Entry {
    id: TypeId,
    value: Arc<dyn Any + Send + Sync>,
    type_name: &'static str,
}

impl Extensions {
    /// No values. Allocates nothing.
    pub const fn new() -> Self {
        Extensions { values: None }
    }

    /// Adds a value, replacing any earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.insert_arc(Arc::new(value));
    }

    /// Adds a value already shared, replacing any earlier value of the same type.
    pub fn insert_arc<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        let entry = Entry {
            id: TypeId::of::<T>(),
            value,
            type_name: std::any::type_name::<T>(),
        };
        // Copies the list (of reference counts) only when another clone shares it.
        let values = Arc::make_mut(self.values.get_or_insert_with(Arc::default));
        match values.iter_mut().find(|e| e.id == entry.id) {
            Some(earlier) => *earlier = entry,
            None => values.push(entry),
        }
    }

    /// The value of type `T`, if one was added.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.get_by_id(TypeId::of::<T>())?.downcast_ref()
    }

    /// The value of type `T` as a shared pointer, if one was added.
    pub fn get_arc<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        Arc::clone(self.get_by_id(TypeId::of::<T>())?)
            .downcast()
            .ok()
    }

    /// Whether a value of type `T` was added.
    pub fn contains<T: Any + Send + Sync>(&self) -> bool {
        self.get_by_id(TypeId::of::<T>()).is_some()
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.values.as_ref().map_or(0, |values| values.len())
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of the type with this id, if one was added.
    pub(crate) fn get_by_id(&self, id: TypeId) -> Option<&Arc<dyn Any + Send + Sync>> {
        let entry = self.values.as_ref()?.iter().find(|e| e.id == id)?;
        Some(&entry.value)
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self
            .values
            .iter()
            .flat_map(|v| v.iter().map(|e| e.type_name));
        f.debug_set().entries(names).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Tenant(&'static str);

    #[test]
    fn values_are_found_by_type_and_a_second_of_a_type_replaces_the_first() {
        let mut extensions = Extensions::new();
        assert!(extensions.is_empty() && extensions.get::<Tenant>().is_none());
        extensions.insert(Tenant("acme"));
        extensions.insert(7u32);
        extensions.insert(Tenant("globex"));
        assert_eq!(extensions.len(), 2);
        assert_eq!(extensions.get::<Tenant>(), Some(&Tenant("globex")));
        assert_eq!(extensions.get::<u32>(), Some(&7));
        assert!(extensions.contains::<u32>() && !extensions.contains::<u64>());
        assert!(extensions.get::<u64>().is_none());
    }

    #[test]
    fn clones_share_values_and_a_change_to_one_leaves_the_other_alone() {
        let shared = Arc::new(Tenant("acme"));
        let mut first = Extensions::new();
        first.insert_arc(Arc::clone(&shared));
        let mut second = first.clone();
        second.insert(1u8);
        assert!(
            Arc::ptr_eq(&first.get_arc::<Tenant>().unwrap(), &shared),
            "the value is shared, not copied"
        );
        assert!(Arc::ptr_eq(&second.get_arc::<Tenant>().unwrap(), &shared));
        assert_eq!((first.len(), second.len()), (1, 2));
        assert!(first.get::<u8>().is_none());
    }

    #[test]
    fn debug_names_the_types_not_the_values() {
        let mut extensions = Extensions::new();
        extensions.insert(Tenant("secret"));
        let shown = format!("{extensions:?}");
        assert!(
            shown.contains("Tenant") && !shown.contains("secret"),
            "{shown}"
        );
    }
}
