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
/// Declare a `&ToolContext` parameter to receive it; it never appears in the schema. For a sync
/// tool the context borrows what it shows from the executor and the caller, so making one costs
/// nothing; an async tool's context owns it (`ToolContext<'static>`). Cloning is cheap; use
/// [`ToolContext::to_static`] to keep a context beyond the call.
#[derive(Clone)]
pub struct ToolContext<'a> {
    tool_name: Held<'a, Arc<str>>,
    call_id: Option<Held<'a, Arc<str>>>,
    /// The caller's token, when the call brought one.
    caller_token: Option<Held<'a, CancellationToken>>,
    /// A token made on first use for a call that brought none.
    own_token: OnceLock<CancellationToken>,
    services: Held<'a, Arc<Services>>,
}

/// A value borrowed for the length of a call, or owned.
#[derive(Clone)]
enum Held<'a, T> {
    Borrowed(&'a T),
    Owned(T),
}

impl<T: Clone> Held<'_, T> {
    fn get(&self) -> &T {
        match self {
            Held::Borrowed(value) => value,
            Held::Owned(value) => value,
        }
    }

    fn to_static(&self) -> Held<'static, T> {
        Held::Owned(self.get().clone())
    }
}

impl<'a> ToolContext<'a> {
    /// A context that borrows everything, for a call that ends before the borrows do.
    pub(crate) fn borrowed(
        tool_name: &'a Arc<str>,
        call_id: Option<&'a Arc<str>>,
        cancellation: Option<&'a CancellationToken>,
        services: &'a Arc<Services>,
    ) -> Self {
        ToolContext {
            tool_name: Held::Borrowed(tool_name),
            call_id: call_id.map(Held::Borrowed),
            caller_token: cancellation.map(Held::Borrowed),
            own_token: OnceLock::new(),
            services: Held::Borrowed(services),
        }
    }

    /// The same context, owning what it shares (a few reference counts), so that it can outlive
    /// the call: moved into a spawned task, for example.
    pub fn to_static(&self) -> ToolContext<'static> {
        ToolContext {
            tool_name: self.tool_name.to_static(),
            call_id: self.call_id.as_ref().map(Held::to_static),
            caller_token: self.caller_token.as_ref().map(Held::to_static),
            own_token: self.own_token.clone(),
            services: self.services.to_static(),
        }
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        self.tool_name.get()
    }

    /// The provider's id of this call, when the call came with one.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_ref().map(|id| &**id.get())
    }

    /// The token that is cancelled when the caller gives up on this call. Long-running tools
    /// should watch it (`token.cancelled().await`) and stop early. It is the token the caller
    /// passed in `CallOptions`; a call that brought none gets a token of its own on first use, so
    /// one call can never cancel another.
    pub fn cancellation_token(&self) -> &CancellationToken {
        match &self.caller_token {
            Some(token) => token.get(),
            None => self.own_token.get_or_init(CancellationToken::new),
        }
    }

    /// The caller's token, when the call brought one.
    pub(crate) fn caller_token(&self) -> Option<&CancellationToken> {
        self.caller_token.as_ref().map(Held::get)
    }

    /// Whether the caller has cancelled this call.
    pub fn is_cancelled(&self) -> bool {
        match &self.caller_token {
            Some(token) => token.get().is_cancelled(),
            None => self
                .own_token
                .get()
                .is_some_and(CancellationToken::is_cancelled),
        }
    }

    /// A value provided to the executor with `ExecutorBuilder::service` or `provide`.
    pub fn service<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.services.get().get::<T>()
    }

    /// Everything provided to the executor.
    pub fn services(&self) -> &Services {
        self.services.get()
    }
}

impl ToolContext<'static> {
    /// A context that owns what it shows, for a call that outlives the caller's borrows.
    pub(crate) fn owned(
        tool_name: Arc<str>,
        call_id: Option<Arc<str>>,
        cancellation: Option<CancellationToken>,
        services: Arc<Services>,
    ) -> Self {
        ToolContext {
            tool_name: Held::Owned(tool_name),
            call_id: call_id.map(Held::Owned),
            caller_token: cancellation.map(Held::Owned),
            own_token: OnceLock::new(),
            services: Held::Owned(services),
        }
    }

    /// A context for calling tool code directly, outside an executor (tests, converters).
    pub fn detached(tool_name: &str) -> Self {
        ToolContext::owned(tool_name.into(), None, None, Arc::default())
    }
}

impl std::fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool_name", &self.tool_name())
            .field("call_id", &self.call_id())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
