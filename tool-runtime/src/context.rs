use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Values provided to an executor, found by type: the services whose methods are tools, and
/// anything else a tool wants through its [`ToolContext`].
#[derive(Default)]
pub struct Services {
    by_type: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>,
}

impl Services {
    /// Adds a value, replacing any earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.by_type
            .insert(TypeId::of::<T>(), (value, std::any::type_name::<T>()));
    }

    /// The value of type `T`, if one was provided.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.by_type
            .get(&TypeId::of::<T>())
            .and_then(|(v, _)| v.downcast_ref())
    }

    /// The value of type `T` as a shared pointer, if one was provided.
    pub fn get_arc<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let (value, _) = self.by_type.get(&TypeId::of::<T>())?;
        Arc::clone(value).downcast().ok()
    }

    pub(crate) fn get_dyn(&self, id: TypeId) -> Option<&Arc<dyn Any + Send + Sync>> {
        self.by_type.get(&id).map(|(v, _)| v)
    }

    /// Whether a value of this type was provided.
    pub fn contains(&self, id: TypeId) -> bool {
        self.by_type.contains_key(&id)
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.by_type.values().map(|(_, name)| name))
            .finish()
    }
}

/// What a tool knows about the call it is serving.
///
/// Declare a `&ToolContext` parameter to receive it; it never appears in the schema. Cloning is
/// cheap (a few reference counts).
#[derive(Clone)]
pub struct ToolContext {
    tool_name: Arc<str>,
    call_id: Option<Arc<str>>,
    /// The caller's token, or one made on first use for a call that brought none.
    cancellation: OnceLock<CancellationToken>,
    services: Arc<Services>,
}

impl ToolContext {
    pub(crate) fn new(
        tool_name: Arc<str>,
        call_id: Option<Arc<str>>,
        cancellation: Option<CancellationToken>,
        services: Arc<Services>,
    ) -> Self {
        let cell = OnceLock::new();
        if let Some(token) = cancellation {
            let _ = cell.set(token);
        }
        ToolContext {
            tool_name,
            call_id,
            cancellation: cell,
            services,
        }
    }

    /// A context for calling tool code directly, outside an executor (tests, converters).
    pub fn detached(tool_name: &str) -> Self {
        ToolContext::new(tool_name.into(), None, None, Arc::default())
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The provider's id of this call, when the call came with one.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The token that is cancelled when the caller gives up on this call. Long-running tools
    /// should watch it (`token.cancelled().await`) and stop early. It is the token the caller
    /// passed in `CallOptions`; a call that brought none gets a token of its own on first use, so
    /// one call can never cancel another.
    pub fn cancellation_token(&self) -> &CancellationToken {
        self.cancellation.get_or_init(CancellationToken::new)
    }

    /// Whether the caller has cancelled this call.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// A value provided to the executor with `ExecutorBuilder::service` or `provide`.
    pub fn service<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.services.get::<T>()
    }

    /// Everything provided to the executor.
    pub fn services(&self) -> &Services {
        &self.services
    }
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool_name", &self.tool_name)
            .field("call_id", &self.call_id)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
