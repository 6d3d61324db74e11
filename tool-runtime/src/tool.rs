//! Hand-written tools: the [`Tool`] trait, and what their calls may return ([`IntoToolOutput`]).
//!
//! A hand-written tool is called as a tool from `#[ai_tool]` is: the executor keeps the tool's
//! value as it keeps a service, and calls it through the same kind of entry the macro's
//! generated code registers (an async invoke function, here one generic function
//! monomorphized per tool type). Its arguments go through the same stages, in the same
//! function: [`Arguments::parse`], with the Validating stage first (there are no probes of the
//! fields of `Args` in generic code, so the Exact stage, which only the macro's probes can
//! grant, is not taken) and the Full stage for whatever that stage does not take.

use std::any::Any;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tool_core::{ToolError, ToolMetadata, ToolOutput, ToolSource, ToolSpec};

use crate::arguments::Arguments;
use crate::boxed::BoxFuture;
use crate::guard::Guard;
use crate::macro_support::service_ref;
use crate::registration::{AsyncInvoke, ExternalConverter, ServiceRef};
use crate::returned::output_json;
use crate::ToolContext;

/// A tool written by hand: a type with a name, a description, an arguments type (or a JSON
/// Schema written out) and an async `call`.
///
/// It is what `#[ai_tool]` writes for a function, written out: register it with
/// [`ExecutorBuilder::tool`](crate::ExecutorBuilder::tool), or with
/// [`ExecutorBuilder::tool_with`](crate::ExecutorBuilder::tool_with) and the same metadata the
/// attribute sets (`.title(..)`, `.category(..)`, `.read_only()`, ...), and the executor checks
/// and calls it as it calls a macro tool. The arguments are checked against the schema before
/// `call` runs, with the same error text; `call` receives them deserialized into
/// [`Tool::Args`].
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tool_runtime::{Executor, Tool, ToolContext};
///
/// /// What `greet` takes.
/// #[derive(Deserialize, JsonSchema)]
/// struct GreetArgs {
///     /// Who to greet.
///     name: String,
/// }
///
/// struct Greet;
///
/// impl Tool for Greet {
///     type Args = GreetArgs;
///     type Output = String;
///
///     fn name(&self) -> &str {
///         "greet"
///     }
///
///     fn description(&self) -> &str {
///         "Greets someone by name."
///     }
///
///     async fn call(&self, args: GreetArgs, _ctx: &ToolContext<'_>) -> String {
///         format!("Hello, {}!", args.name)
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let exec = Executor::builder()
///     .tool_with(Greet, |tool| tool.title("Greeter").read_only())
///     .build()?;
/// let out = exec.execute("greet", r#"{"name": "Ada"}"#).await?;
/// assert_eq!(out.to_text(), "Hello, Ada!");
/// # Ok(()) }
/// ```
///
/// # The schema
///
/// By default the arguments schema is derived from [`Tool::Args`] and made canonical exactly
/// as `#[ai_tool]` makes its own (objects closed, `$ref`s inlined, ...). To write it yourself,
/// return it from [`Tool::parameters`]: it is then enforced as written, as a
/// [`DynamicTool`](crate::DynamicTool)'s is; take the arguments as a `serde_json::Value`, or as
/// a type that reads what that schema admits. The root of a derived schema must be an object's
/// too: a struct, or `serde_json::Map<String, Value>` for any object; a doc comment on the
/// struct becomes the schema's `description`, as for an `#[arg(flatten)]` struct.
///
/// # What `call` returns
///
/// Whatever is [`IntoToolOutput`]: `ToolOutput`, `String` and `&'static str` (text), `()` (no
/// output), `serde_json::Value` and [`Json`]`(value)` of any `Serialize` value (structured
/// JSON), and `Result<T, E>` of any of these with an error `E: Display + Send + Sync + 'static`,
/// whose `Err` is `ToolError::Failed`: the model reads its text, and the caller gets it back
/// with `err.downcast_ref::<E>()` (it is not the failure's `source()`, as the macro makes it of
/// a `std::error::Error`: generic code cannot tell one from a type that is only `Display`). Implement [`IntoToolOutput`] for a type of your own to
/// convert it yourself.
pub trait Tool: Send + Sync + 'static {
    /// What the arguments object deserializes into. Its `JsonSchema` is the tool's arguments
    /// schema, unless [`Tool::parameters`] writes one.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// What [`Tool::call`] returns.
    type Output: IntoToolOutput;

    /// The tool's name: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, which every provider accepts, as for
    /// `#[ai_tool]`; checked at `build()`.
    fn name(&self) -> &str;

    /// What the tool does, for the model. Not blank (checked at `build()`).
    fn description(&self) -> &str;

    /// The arguments schema written as JSON, enforced as written; `None` (the default) derives
    /// it from [`Tool::Args`]. Its root must be `"type": "object"` (checked at `build()`).
    fn parameters(&self) -> Option<Value> {
        None
    }

    /// Runs the tool with its checked arguments.
    ///
    /// Write it as an `async fn`; its future must be `Send`. The context gives the call id,
    /// the cancellation token, progress and the services provided to the executor.
    fn call(
        &self,
        args: Self::Args,
        ctx: &ToolContext<'_>,
    ) -> impl Future<Output = Self::Output> + Send;
}

/// What a hand-written tool's call can return: how it becomes the call's result.
///
/// Implemented for what `#[ai_tool]` converts by default, with `Serialize` values wrapped in
/// [`Json`] (a blanket implementation for every `Serialize` type would claim `String` and
/// `Result` too). Implement it for a type of your own to convert it as you want, as a
/// converter does for a macro tool.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a hand-written tool",
    label = "`Tool::Output` is `{Self}`, which is not `IntoToolOutput`",
    note = "return `ToolOutput`, `String`, `()`, `serde_json::Value`, `Json(value)` of a `Serialize` value, or a `Result` of one of these; or implement `IntoToolOutput` for `{Self}`"
)]
pub trait IntoToolOutput {
    /// Converts the value; `ctx` names the tool and the call.
    fn into_tool_output(self, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError>;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

/// Plain text.
impl IntoToolOutput for String {
    fn into_tool_output(self, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

/// Plain text.
impl IntoToolOutput for &'static str {
    fn into_tool_output(self, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self))
    }
}

/// Empty output.
impl IntoToolOutput for () {
    fn into_tool_output(self, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::empty())
    }
}

/// Structured JSON.
impl IntoToolOutput for Value {
    fn into_tool_output(self, _ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(self))
    }
}

/// A value returned as structured JSON, as `#[ai_tool]` returns any `Serialize` value.
///
/// ```
/// # use tool_runtime::Json;
/// #[derive(serde::Serialize)]
/// struct Forecast {
///     sky: &'static str,
/// }
///
/// type Output = Json<Forecast>; // a `Tool::Output`
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// Structured JSON; a value that cannot be written as JSON is `ToolError::Failed`.
impl<T: Serialize> IntoToolOutput for Json<T> {
    fn into_tool_output(self, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        output_json(self.0, ctx)
    }
}

/// `Ok` converted as `T` is; `Err` is `ToolError::Failed`, with the error's text for the model
/// and the error itself for the caller's `downcast_ref`.
impl<T, E> IntoToolOutput for Result<T, E>
where
    T: IntoToolOutput,
    E: Display + Send + Sync + 'static,
{
    fn into_tool_output(self, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        match self {
            Ok(value) => value.into_tool_output(ctx),
            Err(error) => Err(ToolError::failed(ctx.tool_name(), error)),
        }
    }
}

/// A hand-written tool as the builder keeps it until `build()`: its spec, and the value and
/// invoke function its entry will hold.
pub struct TypedTool {
    pub(crate) spec: ToolSpec,
    /// Why the schema could not be derived from `Args`, reported at `build()`.
    pub(crate) schema_error: Option<tool_core::schema::SchemaError>,
    /// The tool's value, kept as a service is and found by its type.
    pub(crate) value: Arc<dyn Any + Send + Sync>,
    pub(crate) invoke: AsyncInvoke,
}

impl TypedTool {
    /// The tool, with its spec made now: name, description, and the schema written or derived.
    /// `file` and `line` are where it was registered.
    pub(crate) fn new<T: Tool>(tool: T, file: &str, line: u32) -> Self {
        let (parameters, schema_error) = match tool.parameters() {
            Some(written) => (written, None),
            None => match tool_core::schema::canonical_for::<T::Args>() {
                Ok(derived) => (derived, None),
                Err(e) => (Value::Null, Some(e)),
            },
        };
        let spec = ToolSpec {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            parameters,
            output_schema: None,
            metadata: ToolMetadata {
                source: Some(ToolSource::Registered {
                    file: file.to_owned(),
                    line,
                }),
                ..ToolMetadata::default()
            },
        };
        TypedTool {
            spec,
            schema_error,
            value: Arc::new(tool),
            invoke: invoke::<T>,
        }
    }
}

/// Starts a call of the hand-written tool `T`: what `#[ai_tool]` generates for an async tool,
/// written once for every `T`. The arguments are checked and deserialized at once; the future,
/// boxed once with its guard, borrows the tool and the context for the call.
fn invoke<'a, T: Tool>(
    tool: Option<ServiceRef<'a>>,
    args: Arguments<'_, '_>,
    ctx: ToolContext<'a>,
    _external: Option<ExternalConverter>,
    guard: Guard<'a>,
) -> Result<BoxFuture<'a, Result<ToolOutput, ToolError>>, ToolError> {
    let tool = service_ref::<T>(tool, &ctx)?;
    let args: T::Args = args.parse(crate::arguments::ValidatingStage)?;
    Ok(guard.boxed(async move {
        let ctx = &ctx;
        tool.call(args, ctx).await.into_tool_output(ctx)
    }))
}
