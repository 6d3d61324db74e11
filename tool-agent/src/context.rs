//! What a run knows about its request (documents attached, a data source...), read by the
//! purpose gates that decide which system tools are offered.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Values describing one run's request, found by type.
///
/// ```
/// use tool_agent::RunContext;
///
/// struct Documents(Vec<String>);
///
/// let context = RunContext::new().with(Documents(vec!["report.pdf".into()]));
/// assert_eq!(context.get::<Documents>().map(|d| d.0.len()), Some(1));
/// assert!(context.get::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct RunContext {
    by_type: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>,
}

impl RunContext {
    /// An empty context.
    pub fn new() -> Self {
        RunContext::default()
    }

    /// The context with `value` added (replacing a value of the same type).
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// Adds a value, replacing any value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.by_type.insert(
            TypeId::of::<T>(),
            (Arc::new(value), std::any::type_name::<T>()),
        );
    }

    /// The value of type `T`, if there is one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.by_type
            .get(&TypeId::of::<T>())
            .and_then(|(value, _)| value.downcast_ref())
    }
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.by_type.values().map(|(_, name)| name))
            .finish()
    }
}
