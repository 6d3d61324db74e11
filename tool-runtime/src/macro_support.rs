//! Functions the macros' generated code calls. Not a public API.

use std::any::Any;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use tool_core::{ToolError, ToolOutput};

pub use crate::arguments::{
    Arguments, DeserializeChecksSchema, ExactStage, IsExact, IsOptional, NotExact, NotOptional,
    Probe, Stage, ValidatingStage,
};
pub use crate::converter::Converter;
pub use crate::guard::Guard;
pub use crate::registration::*;
pub use crate::returned::*;
pub use crate::ToolContext;
pub use tool_core::{Callers, TaskSupport};

/// The canonical arguments schema of a tool's generated arguments struct; the error becomes
/// [`BuildProblem::BadSchema`](crate::BuildProblem::BadSchema)'s problem.
pub fn canonical_for<T: schemars::JsonSchema + ?Sized>() -> SchemaResult {
    tool_core::schema::canonical_for::<T>()
}

/// The canonical output schema of a tool's value type (see `tool_core::schema`).
pub fn output_schema_for<T: schemars::JsonSchema + ?Sized>() -> Option<serde_json::Value> {
    tool_core::schema::canonical_output_for::<T>()
}

/// What a tool parameter's type needs: a schema and a way to be deserialized.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it needs `JsonSchema` and `Deserialize`",
    label = "this type has no JSON Schema or cannot be deserialized",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to `{Self}`, or use a type that has them"
)]
pub trait ToolParameter {}

impl<T: schemars::JsonSchema + DeserializeOwned> ToolParameter for T {}

/// Called at each parameter's type, so a missing trait is reported there.
pub fn assert_parameter<T: ToolParameter>() {}

/// Asks whether a parameter's type is an `Option` however it is spelled (`type Maybe<T> =
/// Option<T>`): serde lets such a field be left out, while the schema of a parameter not
/// spelled `Option<..>` requires it, so that tool does not take the Exact stage.
pub struct OptionProbe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> OptionProbe<T> {
    /// The probe for `T`.
    #[allow(clippy::new_without_default)]
    #[inline(always)]
    pub fn new() -> Self {
        OptionProbe(PhantomData)
    }
}

/// Chosen by method lookup first, for an `Option`.
pub trait IsOption {
    /// It is an `Option`.
    #[inline(always)]
    fn optionality(&self) -> IsOptional {
        IsOptional
    }
}

impl<T> IsOption for OptionProbe<Option<T>> {}

/// Chosen through one more reference, for every other type.
pub trait NotOption {
    /// It is no `Option`.
    #[inline(always)]
    fn optionality(&self) -> NotOptional {
        NotOptional
    }
}

impl<T: ?Sized> NotOption for &OptionProbe<T> {}

/// The service a method tool is called on, borrowed.
#[inline]
pub fn service_ref<'a, S: Any>(
    service: Option<ServiceRef<'a>>,
    ctx: &ToolContext<'_>,
) -> Result<&'a S, ToolError> {
    service
        .and_then(ServiceRef::downcast::<S>)
        .ok_or_else(|| missing_service::<S>(ctx))
}

fn missing_service<S>(ctx: &ToolContext<'_>) -> ToolError {
    ToolError::Failed {
        tool: ctx.tool_name().to_owned(),
        message: format!(
            "the service `{}` was not provided",
            std::any::type_name::<S>()
        ),
        error: None,
        source: None,
    }
}

/// Checks and deserializes a tool's arguments. Anything invalid is `InvalidArguments`.
///
/// `stage` is the probes' word: [`ExactStage`] when every parameter's type is
/// [`DeserializeChecksSchema`] (serde alone then checks the schema), else [`ValidatingStage`].
/// Only the probes make an [`ExactStage`]. The stage is a type, so a tool's parameter struct
/// is read by its own stage's code alone.
#[inline]
pub fn parse_args<T: DeserializeOwned, S: Stage>(
    args: Arguments<'_, '_>,
    stage: S,
) -> Result<T, ToolError> {
    args.parse(stage)
}

/// The error a tool returned, kept typed.
#[inline]
pub fn fail<E: ToolFailure>(error: E, ctx: &ToolContext<'_>) -> ToolError {
    ToolError::failed(ctx.tool_name(), error)
}

/// The error a tool returned, kept typed and as the failure's `source()`; a [`ToolError`] of
/// the tool's own (such as [`ToolError::retry`]) as it is.
#[inline]
pub fn fail_with_source<E>(error: E, ctx: &ToolContext<'_>) -> ToolError
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut slot = Some(error);
    let own = (&mut slot as &mut dyn Any).downcast_mut::<Option<ToolError>>();
    if let Some(own) = own.and_then(Option::take) {
        return own;
    }
    match slot {
        Some(error) => ToolError::failed_with_source(ctx.tool_name(), error),
        // Taken above only when it was a `ToolError`, which returned.
        None => ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message: "the tool's error was lost".to_owned(),
            error: None,
            source: None,
        },
    }
}

/// A probe for a tool's error type `E`: `(&Failure::of(&error)).fail()` is [`fail_with_source`]
/// when `E` is a `std::error::Error`, and [`fail`] otherwise, decided at compile time.
pub struct Failure<E>(PhantomData<fn() -> E>);

impl<E> Failure<E> {
    /// The probe for the type of `error`.
    #[inline(always)]
    pub fn of(_error: &E) -> Self {
        Failure(PhantomData)
    }
}

/// What a failure function is: the tool's error and the context in, the `ToolError` out.
pub type FailWith<E> = fn(E, &ToolContext<'_>) -> ToolError;

/// Chosen by method lookup first, when the error is a `std::error::Error`.
pub trait FailsAsError {
    /// The tool's error type.
    type Err;
    /// [`fail_with_source`].
    fn fail(&self) -> FailWith<Self::Err>;
}

impl<E: std::error::Error + Send + Sync + 'static> FailsAsError for Failure<E> {
    type Err = E;

    #[inline(always)]
    fn fail(&self) -> FailWith<E> {
        fail_with_source::<E>
    }
}

/// Chosen through one more reference, for any other error type.
pub trait FailsAsText {
    /// The tool's error type.
    type Err;
    /// [`fail`], which needs the error to be a [`ToolFailure`].
    fn fail(&self) -> FailWith<Self::Err>
    where
        Self::Err: ToolFailure;
}

impl<E> FailsAsText for &Failure<E> {
    type Err = E;

    #[inline(always)]
    fn fail(&self) -> FailWith<E>
    where
        E: ToolFailure,
    {
        fail::<E>
    }
}

/// Converts a tool's value: through the external converter when one is registered for the tool,
/// otherwise through `default`.
#[inline]
pub fn finish<T: 'static>(
    value: T,
    ctx: &ToolContext<'_>,
    external: Option<ExternalConverter>,
    default: fn(T, &ToolContext<'_>) -> Result<ToolOutput, ToolError>,
) -> Result<ToolOutput, ToolError> {
    match external {
        Some(convert) => convert(Box::new(value), ctx),
        None => default(value, ctx),
    }
}

/// Applies a converter named on the attribute. The probe names the value's type before the
/// converter is looked at, so a converter taking another type is reported as such.
#[inline]
pub fn convert_with<T, M, C: Converter<T, M>>(
    _value_type: Produced<T>,
    converter: C,
    value: T,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    Ok(converter.convert(value, ctx))
}

/// Unboxes a tool's value for a converter registered with `#[ai_tool_converter]`.
pub fn unbox<T: 'static>(value: Box<dyn Any>, ctx: &ToolContext<'_>) -> Result<T, ToolError> {
    value
        .downcast::<T>()
        .map(|v| *v)
        .map_err(|_| ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message: format!("the converter expected a `{}`", std::any::type_name::<T>()),
            error: None,
            source: None,
        })
}
