//! What a tool returns, told apart by its type as the compiler resolves it, not as it is
//! spelled: a `Result` fails on `Err` however it is named (`std::io::Result<T>`,
//! `anyhow::Result<T>`, an alias of your own), and the value (the `Ok` value of a `Result`) is
//! converted by what it is: `()` is empty output, `String` and `&str` text, `ToolOutput` itself,
//! any other `T: Serialize` structured JSON.
//!
//! The generated code asks with autoref probes, settled at compile time and free at run time:
//!
//! - `(&Returned::of(&value)).split(value)` is the value as a `Result`: itself for a `Result`
//!   ([`ReturnsResult`]), `Ok(value)` with an error that cannot happen otherwise
//!   ([`ReturnsValue`]);
//! - `(&Produced::of(&ok)).normalize(ok)` is the value a converter receives (`&str` becomes
//!   `String`), and `.default_output()` its default conversion ([`ProducesKnown`] for the four
//!   types converted by what they are, [`ProducesJson`] for the rest).
//!
//! The types alone, with no value, give the type a converter receives, for the check at
//! `Executor::build()`: `type_ref((&(&Returned::<R>::new()).produced()).value())`; and the
//! output schema: `(&(&produced).schema()).output_schema()` is the value's canonical schema
//! when it is converted to JSON and is `JsonSchema` ([`HasOutputSchema`]), and none otherwise
//! ([`NoOutputSchema`]): `()`, `String`, `&str` and `ToolOutput` are not structured results, and
//! a type without `JsonSchema` has no schema to give.

use std::convert::Infallible;
use std::fmt::Display;
use std::marker::PhantomData;

use serde::Serialize;
use tool_core::{ToolError, ToolOutput};

use crate::registration::TypeRef;
use crate::ToolContext;

/// The conversion of a tool's value when no converter is registered for it.
pub type DefaultOutput<T> = fn(T, &ToolContext<'_>) -> Result<ToolOutput, ToolError>;

/// What a tool can return as its value: anything `Serialize` becomes structured JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool: it needs `Serialize`",
    label = "the tool returns a `{Self}` here, which is not `Serialize`",
    note = "add `#[derive(serde::Serialize)]` to `{Self}`, return `String` or `ToolOutput`, or name a converter with `#[ai_tool(convert = path)]`"
)]
pub trait ToolValue: Serialize {}

impl<T: Serialize> ToolValue for T {}

/// What a tool's `Result` can fail with: the model reads its `Display` text, and the caller gets
/// it back typed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a tool's `Result`: it needs `Display + Send + Sync + 'static`",
    label = "the error type of this `Result` is not `Display + Send + Sync + 'static`",
    note = "implement `std::fmt::Display` for `{Self}` (the model reads that text), keep it `Send + Sync` and free of borrows, or map the error into a type that is, such as `String`"
)]
pub trait ToolFailure: Display + Send + Sync + 'static {}

impl<E: Display + Send + Sync + 'static> ToolFailure for E {}

/// A probe for a tool's return type `R`.
pub struct Returned<R>(PhantomData<fn() -> R>);

impl<R> Returned<R> {
    /// The probe for `R`, named.
    #[inline(always)]
    pub const fn new() -> Self {
        Returned(PhantomData)
    }

    /// The probe for the type of `value`.
    #[inline(always)]
    pub fn of(_value: &R) -> Self {
        Returned(PhantomData)
    }
}

impl<R> Default for Returned<R> {
    fn default() -> Self {
        Returned::new()
    }
}

/// A `Result`, whatever its name: `Err` is the tool's failure.
pub trait ReturnsResult {
    /// The `Ok` type.
    type Ok;
    /// The `Err` type.
    type Err;
    /// The value as a `Result`: itself.
    fn split(&self, value: Result<Self::Ok, Self::Err>) -> Result<Self::Ok, Self::Err>;
    /// The probe for the `Ok` type.
    fn produced(&self) -> Produced<Self::Ok>;
}

impl<T, E> ReturnsResult for Returned<Result<T, E>> {
    type Ok = T;
    type Err = E;

    #[inline(always)]
    fn split(&self, value: Result<T, E>) -> Result<T, E> {
        value
    }

    #[inline(always)]
    fn produced(&self) -> Produced<T> {
        Produced::new()
    }
}

/// Any other value: it cannot fail.
pub trait ReturnsValue {
    /// The value's type.
    type Ok;
    /// The value as a `Result` that is always `Ok`.
    fn split(&self, value: Self::Ok) -> Result<Self::Ok, Infallible>;
    /// The probe for the value's type.
    fn produced(&self) -> Produced<Self::Ok>;
}

impl<R> ReturnsValue for &Returned<R> {
    type Ok = R;

    #[inline(always)]
    fn split(&self, value: R) -> Result<R, Infallible> {
        Ok(value)
    }

    #[inline(always)]
    fn produced(&self) -> Produced<R> {
        Produced::new()
    }
}

/// A probe for a tool's value `T` (the `Ok` value of a `Result`).
pub struct Produced<T>(PhantomData<fn() -> T>);

impl<T> Produced<T> {
    /// The probe for `T`, named.
    #[inline(always)]
    pub const fn new() -> Self {
        Produced(PhantomData)
    }

    /// The probe for the type of `value`.
    #[inline(always)]
    pub fn of(_value: &T) -> Self {
        Produced(PhantomData)
    }
}

impl<T> Default for Produced<T> {
    fn default() -> Self {
        Produced::new()
    }
}

/// `()`, `String`, `&str` and `ToolOutput`: converted by what they are, not as JSON.
pub trait ProducesKnown {
    /// The value as the tool returns it.
    type Input;
    /// The value as a converter receives it.
    type Value;
    /// Turns the value into what a converter receives.
    fn normalize(&self, value: Self::Input) -> Self::Value;
    /// The conversion used when no converter is registered.
    fn default_output(&self) -> DefaultOutput<Self::Value>;
    /// The probe for what a converter receives.
    fn value(&self) -> Produced<Self::Value>;
    /// The probe for the output schema: none, as these are not structured results.
    fn schema(&self) -> Schema<NotStructured>;
}

macro_rules! known {
    ($($(#[$doc:meta])* <$($lt:lifetime)?> $input:ty => $value:ty, $normalize:expr, $output:expr;)*) => {$(
        $(#[$doc])*
        impl<$($lt)?> ProducesKnown for Produced<$input> {
            type Input = $input;
            type Value = $value;

            #[inline(always)]
            fn normalize(&self, value: $input) -> $value {
                $normalize(value)
            }

            #[inline(always)]
            fn default_output(&self) -> DefaultOutput<$value> {
                $output
            }

            #[inline(always)]
            fn value(&self) -> Produced<$value> {
                Produced::new()
            }

            #[inline(always)]
            fn schema(&self) -> Schema<NotStructured> {
                Schema(PhantomData)
            }
        }
    )*};
}

known! {
    /// Empty output.
    <> () => (), std::convert::identity, |(), _| Ok(ToolOutput::empty());
    /// Plain text.
    <> String => String, std::convert::identity, |text, _| Ok(ToolOutput::text(text));
    /// Plain text, owned first so that a converter can keep it.
    <'a> &'a str => String, String::from, |text, _| Ok(ToolOutput::text(text));
    /// Itself.
    <> ToolOutput => ToolOutput, std::convert::identity, |output, _| Ok(output);
}

/// Any other value: structured JSON, which needs `Serialize` only when no converter is named.
pub trait ProducesJson {
    /// The value's type.
    type Input;
    /// The value, as a converter receives it.
    fn normalize(&self, value: Self::Input) -> Self::Input;
    /// Structured JSON.
    fn default_output(&self) -> DefaultOutput<Self::Input>
    where
        Self::Input: ToolValue;
    /// The probe for what a converter receives.
    fn value(&self) -> Produced<Self::Input>;
    /// The probe for the output schema: the value's own.
    fn schema(&self) -> Schema<Self::Input>;
}

impl<T> ProducesJson for &Produced<T> {
    type Input = T;

    #[inline(always)]
    fn normalize(&self, value: T) -> T {
        value
    }

    #[inline(always)]
    fn default_output(&self) -> DefaultOutput<T>
    where
        T: ToolValue,
    {
        output_json::<T>
    }

    #[inline(always)]
    fn value(&self) -> Produced<T> {
        Produced::new()
    }

    #[inline(always)]
    fn schema(&self) -> Schema<T> {
        Schema(PhantomData)
    }
}

/// A probe for the output schema of a tool's value `T`.
pub struct Schema<T>(PhantomData<fn() -> T>);

/// Stands for the values that are not structured results (`()`, text, `ToolOutput`): it has
/// no `JsonSchema`, so its probe finds no schema.
pub struct NotStructured;

/// Makes a tool's output schema, or says there is none.
pub type MakeOutputSchema = fn() -> Option<serde_json::Value>;

/// A value converted to JSON whose type is `JsonSchema`: its canonical schema.
pub trait HasOutputSchema {
    /// The function making the schema.
    fn output_schema(&self) -> MakeOutputSchema;
}

impl<T: schemars::JsonSchema> HasOutputSchema for Schema<T> {
    #[inline(always)]
    fn output_schema(&self) -> MakeOutputSchema {
        tool_core::schema::canonical_output_for::<T>
    }
}

/// Any other value: no schema.
pub trait NoOutputSchema {
    /// A function making none.
    fn output_schema(&self) -> MakeOutputSchema;
}

impl<T> NoOutputSchema for &Schema<T> {
    #[inline(always)]
    fn output_schema(&self) -> MakeOutputSchema {
        || None
    }
}

/// Default conversion of any `T: Serialize`: structured JSON.
#[inline]
pub(crate) fn output_json<T: Serialize>(
    value: T,
    ctx: &ToolContext<'_>,
) -> Result<ToolOutput, ToolError> {
    serde_json::to_value(value)
        .map(ToolOutput::json)
        .map_err(|e| ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message: format!("the result could not be turned into JSON: {e}"),
            error: None,
            source: None,
        })
}

/// The type a converter receives, for the check at `build()`.
#[inline]
pub fn type_ref<T: 'static>(_: Produced<T>) -> TypeRef {
    TypeRef::of::<T>()
}

#[cfg(test)]
// The probes are called as generated code calls them: the borrow picks the fallback when the
// first trait does not apply, which clippy cannot tell from a needless one.
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;
    use std::any::TypeId;

    type Alias<T> = Result<T, String>;

    fn converter_type<R>() -> TypeId
    where
        Returned<R>: ReturnsResult,
        <Returned<R> as ReturnsResult>::Ok: 'static,
    {
        TypeId::of::<<Returned<R> as ReturnsResult>::Ok>()
    }

    #[test]
    fn a_result_is_split_by_its_type_whatever_its_name() {
        let value: Alias<u8> = Err("no".into());
        let split = (&Returned::of(&value)).split(value);
        assert_eq!(split, Err("no".to_owned()));
        let value: std::io::Result<u8> = Ok(1);
        assert!(matches!((&Returned::of(&value)).split(value), Ok(1)));
        assert_eq!(converter_type::<Alias<u8>>(), TypeId::of::<u8>());
    }

    #[test]
    fn any_other_value_is_ok() {
        let value = 7u8;
        let split: Result<u8, Infallible> = (&Returned::of(&value)).split(value);
        assert_eq!(split, Ok(7));
    }

    #[test]
    fn known_values_are_normalized_and_others_kept() {
        let text = "hi";
        let normalized: String = (&Produced::of(&text)).normalize(text);
        assert_eq!(normalized, "hi");
        assert_eq!(
            (type_ref((&Produced::<&str>::new()).value()).id)(),
            TypeId::of::<String>()
        );
        let number = 3u32;
        let kept: u32 = (&Produced::of(&number)).normalize(number);
        assert_eq!(kept, 3);
    }
}
