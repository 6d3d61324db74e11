//! What a run knows about its request (documents attached, a data source...), read by the
//! purpose gates that decide which system tools are offered.

use std::any::Any;

use tool_runtime::Extensions;

/// Values describing one run's request, found by type (kept as a call's
/// [`Extensions`] are: one value per type, cheap to clone).
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
    values: Extensions,
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
        self.values.insert(value);
    }

    /// The value of type `T`, if there is one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values.get::<T>()
    }
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.values.fmt(f)
    }
}
