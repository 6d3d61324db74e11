use tool_core::ToolOutput;

use crate::ToolContext;

/// A function that turns what a tool returned into [`ToolOutput`]: `fn(T) -> ToolOutput` or
/// `fn(T, &ToolContext) -> ToolOutput`.
///
/// `M` only tells the two shapes apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot convert the tool's return value of type `{T}`",
    label = "this converter does not take `{T}`",
    note = "a converter is `fn({T}) -> ToolOutput` or `fn({T}, &ToolContext) -> ToolOutput`; for a tool returning `Result<{T}, E>` it takes the `Ok` value"
)]
pub trait Converter<T, M> {
    /// Converts the value.
    fn convert(&self, value: T, ctx: &ToolContext<'_>) -> ToolOutput;
}

impl<T, F> Converter<T, (T,)> for F
where
    F: Fn(T) -> ToolOutput,
{
    fn convert(&self, value: T, _ctx: &ToolContext<'_>) -> ToolOutput {
        self(value)
    }
}

impl<T, F> Converter<T, (T, ToolContext<'static>)> for F
where
    F: Fn(T, &ToolContext<'_>) -> ToolOutput,
{
    fn convert(&self, value: T, ctx: &ToolContext<'_>) -> ToolOutput {
        self(value, ctx)
    }
}
