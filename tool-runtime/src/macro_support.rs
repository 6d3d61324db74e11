//! Functions the macros' generated code calls. Not a public API.

use std::any::Any;
use std::fmt::Display;

use serde::de::DeserializeOwned;
use serde::Serialize;
use tool_core::{ToolError, ToolOutput};

pub use crate::converter::Converter;
pub use crate::exact::{ExactSchema, IsExact, NotExact, Probe};
pub use crate::guard::Guard;
pub use crate::registration::*;
pub use crate::{Arguments, ToolContext};
pub use tool_core::schema::canonical_for;

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
    }
}

/// Checks and deserializes a tool's arguments. Anything invalid is `InvalidArguments`.
///
/// `exact` is the generated code's finding that every parameter's type is
/// [`ExactSchema`]: serde alone then checks the schema.
#[inline]
pub fn parse_args<T: DeserializeOwned>(
    args: Arguments<'_, '_>,
    exact: bool,
) -> Result<T, ToolError> {
    if exact {
        args.parse_exact()
    } else {
        args.parse()
    }
}

/// The error a tool returned, kept typed.
pub fn fail<E: Display + Send + Sync + 'static>(error: E, ctx: &ToolContext<'_>) -> ToolError {
    ToolError::failed(ctx.tool_name(), error)
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

/// Applies a converter named on the attribute.
#[inline]
pub fn convert_with<T, M, C: Converter<T, M>>(
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
        })
}

/// Default conversion of `()`: empty output.
#[inline]
pub fn output_unit(_: (), _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::empty())
}

/// Default conversion of `String`: plain text.
#[inline]
pub fn output_text(text: String, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(text))
}

/// Default conversion of `ToolOutput`: itself.
#[inline]
pub fn output_itself(output: ToolOutput, _: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    Ok(output)
}

/// Default conversion of any `T: Serialize`: structured JSON.
#[inline]
pub fn output_json<T: Serialize>(value: T, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
    serde_json::to_value(value)
        .map(ToolOutput::json)
        .map_err(|e| ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message: format!("the result could not be turned into JSON: {e}"),
            error: None,
        })
}
