//! What `#[ai_tool]` and `#[ai_tool_converter]` register at link time through `inventory`.
//!
//! Everything here is built in `const` context by generated code; the executor reads it once, at
//! `build()`. Not a public API: the fields may change with the macros.

use std::any::{Any, TypeId};
use std::sync::Arc;

use tool_core::{SafetyHints, ToolError, ToolOutput};

use crate::arguments::Arguments;
pub use crate::boxed::BoxFuture;
use crate::guard::Guard;
use crate::ToolContext;

/// What makes a tool's canonical arguments schema gives back.
pub type SchemaResult = Result<serde_json::Value, tool_core::schema::SchemaError>;

/// A converter registered elsewhere, applied to a tool's value boxed as `Any`.
pub type ExternalConverter = fn(Box<dyn Any>, &ToolContext<'_>) -> Result<ToolOutput, ToolError>;

/// A tool's service as the executor keeps it: the value, and its type's id, taken from the value
/// itself when the executor is built.
#[derive(Clone)]
pub(crate) struct Service {
    value: Arc<dyn Any + Send + Sync>,
    id: TypeId,
}

impl Service {
    pub(crate) fn new(value: Arc<dyn Any + Send + Sync>) -> Self {
        // The value's own type, not the `Arc`'s.
        let id = (*value).type_id();
        Service { value, id }
    }

    /// The service, borrowed for a call.
    #[inline]
    pub(crate) fn borrow(&self) -> ServiceRef<'_> {
        ServiceRef {
            value: &*self.value,
            id: self.id,
        }
    }
}

/// A tool's service, borrowed for a call: what generated code finds its `&self` in.
///
/// It carries its type's id beside it, so that finding the method's type compares two ids in
/// place, with no call through `Any`'s table.
#[derive(Clone, Copy)]
pub struct ServiceRef<'a> {
    value: &'a (dyn Any + Send + Sync),
    id: TypeId,
}

impl<'a> ServiceRef<'a> {
    /// The service as an `S`, when it is one.
    #[inline]
    pub fn downcast<S: Any>(self) -> Option<&'a S> {
        if self.id != TypeId::of::<S>() {
            return None;
        }
        let value: *const (dyn Any + Send + Sync) = self.value;
        // SAFETY: a `ServiceRef` is made only by `Service::borrow`, whose `id` is the type id of
        // the value itself (`Service::new`): the value is an `S`.
        Some(unsafe { &*value.cast::<S>() })
    }
}

/// Calls a sync tool: the service (when the tool is a method), the arguments (checked as they
/// are deserialized), the context and the external converter (when one is registered).
pub type SyncInvoke = fn(
    Option<ServiceRef<'_>>,
    Arguments<'_, '_>,
    &ToolContext<'_>,
    Option<ExternalConverter>,
) -> Result<ToolOutput, ToolError>;

/// Starts an async tool: the arguments are checked and deserialized at once, and the returned
/// future, boxed once with its guard, borrows the service and the context's parts for the call.
pub type AsyncInvoke =
    for<'a> fn(
        Option<ServiceRef<'a>>,
        Arguments<'_, '_>,
        ToolContext<'a>,
        Option<ExternalConverter>,
        Guard<'a>,
    ) -> Result<BoxFuture<'a, Result<ToolOutput, ToolError>>, ToolError>;

/// How a registered tool is called.
#[derive(Clone, Copy)]
pub enum Invoke {
    /// A plain function, called in place.
    Sync(SyncInvoke),
    /// An `async fn`.
    Async(AsyncInvoke),
}

/// A type, known by id and by name (for messages).
#[derive(Clone, Copy)]
pub struct TypeRef {
    /// The type's id.
    pub id: fn() -> TypeId,
    /// The type's name.
    pub name: fn() -> &'static str,
}

impl TypeRef {
    /// The reference for `T`.
    pub const fn of<T: ?Sized + 'static>() -> Self {
        TypeRef {
            id: TypeId::of::<T>,
            name: std::any::type_name::<T>,
        }
    }
}

/// Where in the source something was defined.
#[derive(Clone, Copy, Debug)]
pub struct Location {
    /// `module_path!()`.
    pub module: &'static str,
    /// `file!()`.
    pub file: &'static str,
    /// `line!()`.
    pub line: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}:{})", self.module, self.file, self.line)
    }
}

/// Metadata written on the attribute.
#[derive(Clone, Copy)]
pub struct StaticMetadata {
    /// `title = ".."`.
    pub title: Option<&'static str>,
    /// `category = ".."`.
    pub category: Option<&'static str>,
    /// `purpose = ".."`, repeatable.
    pub purposes: &'static [&'static str],
    /// `selectable`.
    pub selectable: bool,
    /// `keywords = [..]`.
    pub keywords: &'static [&'static str],
    /// `examples = [..]`.
    pub examples: &'static [&'static str],
    /// `read_only`, `destructive`, `idempotent`, `open_world`.
    pub hints: SafetyHints,
    /// `timeout = ".."`, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `max_result_bytes = N`.
    pub max_result_bytes: Option<usize>,
    /// `max_retries = N`.
    pub max_retries: Option<usize>,
    /// `requires_approval`.
    pub requires_approval: bool,
    /// `defer_loading`.
    pub defer_loading: bool,
    /// `callers = "code"` or `"model_and_code"`.
    pub callers: tool_core::Callers,
    /// `task` or `task = "required"`.
    pub task: tool_core::TaskSupport,
    /// `grammar = free | lark("..") | regex("..")`.
    pub text_input: Option<StaticTextInput>,
    /// The impl's `#[ai_tools(namespace = "..")]` and its doc comment.
    pub namespace: Option<(&'static str, &'static str)>,
    /// `icon = ".."`.
    pub icon: Option<&'static str>,
    /// `strict` or `strict = false`; `None` when not written.
    pub strict: Option<bool>,
}

/// `grammar = ..`: the text a tool takes ([`tool_core::TextInput`]).
#[derive(Clone, Copy, Debug)]
pub enum StaticTextInput {
    /// `grammar = free`.
    Free,
    /// `grammar = lark("..")`.
    Lark(&'static str),
    /// `grammar = regex("..")`.
    Regex(&'static str),
}

impl StaticTextInput {
    /// As the spec's metadata has it.
    pub fn to_text_input(self) -> tool_core::TextInput {
        match self {
            StaticTextInput::Free => tool_core::TextInput::Free,
            StaticTextInput::Lark(definition) => tool_core::TextInput::Lark {
                definition: definition.to_owned(),
            },
            StaticTextInput::Regex(definition) => tool_core::TextInput::Regex {
                definition: definition.to_owned(),
            },
        }
    }
}

/// One tool registered by `#[ai_tool]`.
pub struct ToolRegistration {
    /// The tool's name.
    pub name: &'static str,
    /// The tool's description.
    pub description: &'static str,
    /// Where the function is.
    pub location: Location,
    /// Makes the canonical arguments schema.
    pub schema: fn() -> SchemaResult,
    /// The service type, for a method.
    pub service: Option<TypeRef>,
    /// The type a converter receives (the `Ok` type of a `Result`).
    pub output: Option<TypeRef>,
    /// Makes the canonical schema of the structured result: `Some` when the value's type is
    /// `JsonSchema` and is converted to JSON (not `()`, text or `ToolOutput`).
    pub output_schema: fn() -> Option<serde_json::Value>,
    /// Whether the attribute names a converter (`convert = ..`).
    pub has_converter: bool,
    /// How to call it.
    pub invoke: Invoke,
    /// The rest of the attribute.
    pub metadata: StaticMetadata,
}

/// A converter registered by `#[ai_tool_converter("tool")]`.
pub struct ConverterRegistration {
    /// The tool it converts for.
    pub tool: &'static str,
    /// The type it takes.
    pub input: TypeRef,
    /// The converter, taking the value boxed.
    pub convert: ExternalConverter,
    /// Where it is.
    pub location: Location,
}

inventory::collect!(ToolRegistration);
inventory::collect!(ConverterRegistration);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_found_as_its_own_type_only() {
        let service = Service::new(Arc::new(42u32));
        assert_eq!(service.borrow().downcast::<u32>(), Some(&42));
        assert!(service.borrow().downcast::<u64>().is_none());
        assert!(service.borrow().downcast::<Arc<u32>>().is_none());
    }
}
