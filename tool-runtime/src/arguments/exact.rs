//! The Exact stage: serde alone, for parameter types whose `Deserialize` checks everything
//! their schema says.
//!
//! For `i64` the schema is `{"type": "integer"}` with `i64`'s bounds, and serde accepts exactly
//! the JSON integers in those bounds; for `String` the schema is `{"type": "string"}`, and
//! serde accepts exactly strings. When every parameter of a tool is such a type, the generated
//! argument struct (which denies unknown fields, and requires what the schema requires) accepts
//! no object the schema refuses: deserializing it is validating it. Such a tool's arguments go
//! straight through serde, and anything serde refuses takes the Full stage, which names every
//! violation. serde may refuse more than the schema (`1.0` for an integer, a repeated key in
//! JSON text); the Full stage then decides, as it always did.
//!
//! Only types of the standard library and `serde_json::Value` are listed, since a user type's
//! schema can say more than its `Deserialize` checks (a `#[schemars(range(max = 10))]`, a
//! custom schema). Any other type takes the Validating stage, which checks the schema itself.
//!
//! The generated code asks with the autoref probe: `(&Probe::<T>::new()).exact()` is an
//! [`ExactStage`] when `T: DeserializeChecksSchema` and a [`ValidatingStage`] otherwise, decided
//! at compile time, as types: the tool's parse is instantiated for its own stage alone, so a
//! tool compiles one way of reading its arguments rather than both. [`ExactStage`] has no
//! public constructor: the Exact stage is taken on the probes' word only, never on a `true`
//! written by hand.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::budget::{ArgumentLimits, Budget, Numbers};
use super::raw::non_empty;

/// A type whose `Deserialize`, from JSON, accepts only what its JSON Schema admits, so that
/// deserializing it is validating it.
///
/// Sealed: only the types listed here are, since a wrong entry would let arguments through
/// unchecked.
pub trait DeserializeChecksSchema: sealed::Sealed {}

/// The word of the probes that every parameter of a tool is [`DeserializeChecksSchema`]: the
/// Exact stage may read its arguments with serde alone.
///
/// Only a probe makes one (its field is private, and the probe traits are sealed), and a probe
/// gives one only for a type that is [`DeserializeChecksSchema`]; the generated code asks of
/// each parameter's own type. So no `true` written by hand skips the schema. The token is not
/// tied to the type it was asked about: hidden code calling the probes of one type and parsing
/// another could still skip it, which is why all of this is reachable only through the macros'
/// hidden re-exports.
#[derive(Clone, Copy, Debug)]
pub struct ExactStage(());

/// The Validating stage: the schema is checked on the way into the parameter struct. Anyone
/// may take it; it skips nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatingStage;

mod sealed {
    pub trait Sealed {}

    /// The probes, and nothing else, answer [`IsExact`](super::IsExact) and
    /// [`NotExact`](super::NotExact).
    pub trait Probes {}
}

macro_rules! exact {
    ($($ty:ty)*) => {$(
        impl sealed::Sealed for $ty {}
        impl DeserializeChecksSchema for $ty {}
    )*};
}

exact! {
    bool i8 i16 i32 i64 isize u8 u16 u32 u64 usize f64 String Value
}

/// `null`, and only `null`: what the probes of a tool start from, so that a tool with no
/// parameters, whose generated struct takes only the empty object, is exact too.
impl sealed::Sealed for () {}
impl DeserializeChecksSchema for () {}

/// `null` or the inner type's values: the schema adds `null` to the inner one.
impl<T: DeserializeChecksSchema> DeserializeChecksSchema for Option<T> {}
impl<T: DeserializeChecksSchema> sealed::Sealed for Option<T> {}

/// An array whose items are the inner type's values.
impl<T: DeserializeChecksSchema> DeserializeChecksSchema for Vec<T> {}
impl<T: DeserializeChecksSchema> sealed::Sealed for Vec<T> {}

/// An object whose values are the inner type's values (`additionalProperties`). JSON keys are
/// strings, and a repeated key keeps its last value in the map as in a parsed `Value`.
impl<T: DeserializeChecksSchema> DeserializeChecksSchema for HashMap<String, T> {}
impl<T: DeserializeChecksSchema> sealed::Sealed for HashMap<String, T> {}

/// The same, sorted.
impl<T: DeserializeChecksSchema> DeserializeChecksSchema for BTreeMap<String, T> {}
impl<T: DeserializeChecksSchema> sealed::Sealed for BTreeMap<String, T> {}

/// Asks whether `T` is [`DeserializeChecksSchema`], where the generated code knows `T`.
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// The probe for `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(PhantomData)
    }
}

/// Chosen by method lookup first, when `T: DeserializeChecksSchema`. Sealed: only the probes
/// answer it.
pub trait IsExact: sealed::Probes {
    /// The Exact stage may be taken.
    #[inline(always)]
    fn exact(&self) -> ExactStage {
        ExactStage(())
    }
}

impl<T: ?Sized> sealed::Probes for Probe<T> {}
impl<T: DeserializeChecksSchema + ?Sized> IsExact for Probe<T> {}

/// Chosen through one more reference, for every other `T`. Sealed as [`IsExact`] is.
pub trait NotExact: sealed::Probes {
    /// The Exact stage may not be taken.
    #[inline(always)]
    fn exact(&self) -> ValidatingStage {
        ValidatingStage
    }
}

impl<T: ?Sized> sealed::Probes for &Probe<T> {}
impl<T: ?Sized> NotExact for &Probe<T> {}

/// JSON text of an object, deserialized; `None` for anything else or anything serde refuses.
/// Blank text is the empty object (`non_empty`).
///
/// serde would also take a struct from an array of its fields, which the schema refuses, so
/// the text must open an object.
#[inline]
pub(super) fn parse_text<T: DeserializeOwned>(text: &str) -> Option<T> {
    let text = match text.as_bytes().first() {
        Some(b'{') => text,
        _ => object_after_blanks(text)?,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = T::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(parsed)
}

/// Text that does not open with `{` at once: itself (or `{}` for blank text) when its first
/// other character is `{`, and `None` when it is not an object.
#[cold]
fn object_after_blanks(text: &str) -> Option<&str> {
    let text = non_empty(text);
    text.trim_ascii_start().starts_with('{').then_some(text)
}

/// An object value within the size budget, deserialized; `None` otherwise. Numbers are counted
/// at their most room: a value near the cap goes to the Full stage, which counts exactly.
#[inline]
pub(super) fn parse_value<T: DeserializeOwned>(value: &Value, limits: ArgumentLimits) -> Option<T> {
    let fits = value.is_object() && Budget::new(limits).add_value(value, Numbers::AtMostRoom);
    fits.then(|| T::deserialize(value).ok())?
}

#[cfg(test)]
// The probes are called as generated code calls them: the borrow picks the fallback when the
// first trait does not apply, which clippy cannot tell from a needless one.
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;
    use crate::arguments::budget::NESTING_LIMIT;

    struct Custom;

    fn is_exact<S: 'static>(_: S) -> bool {
        std::any::TypeId::of::<S>() == std::any::TypeId::of::<ExactStage>()
    }

    // The borrows are the probe: autoref specialization picks `IsExact` for `Probe<T>` and falls
    // back to `NotExact` for `&Probe<T>`, as the generated code calls it.
    #[allow(clippy::needless_borrow)]
    #[test]
    fn the_probe_tells_listed_types_from_others() {
        assert!(is_exact((&Probe::<i64>::new()).exact()));
        assert!(is_exact((&Probe::<()>::new()).exact()));
        assert!(is_exact((&Probe::<Option<Vec<String>>>::new()).exact()));
        assert!(!is_exact((&Probe::<Custom>::new()).exact()));
        assert!(!is_exact((&Probe::<Vec<Custom>>::new()).exact()));
        assert!(!is_exact((&Probe::<f32>::new()).exact()));
        assert!(is_exact((&Probe::<HashMap<String, u8>>::new()).exact()));
        assert!(!is_exact(
            (&Probe::<HashMap<String, Custom>>::new()).exact()
        ));
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Point {
        x: i64,
    }

    #[test]
    fn reads_objects_only_and_leaves_the_rest_to_the_full_stage() {
        assert_eq!(parse_text::<Point>(r#"{"x": 1}"#), Some(Point { x: 1 }));
        assert_eq!(parse_text::<Point>(r#"  {"x": 1}"#), Some(Point { x: 1 }));
        assert_eq!(parse_text::<Point>("[1]"), None);
        assert_eq!(parse_text::<Point>(r#"{"x": 1.0}"#), None);
        assert_eq!(parse_text::<Point>(r#"{"x": 1} x"#), None);
        let value = serde_json::json!({"x": 1});
        assert_eq!(
            parse_value::<Point>(&value, ArgumentLimits::new(100, NESTING_LIMIT)),
            Some(Point { x: 1 })
        );
        assert_eq!(
            parse_value::<Point>(&value, ArgumentLimits::new(5, NESTING_LIMIT)),
            None,
            "over the size cap"
        );
        assert_eq!(
            parse_value::<Point>(
                &serde_json::json!([1]),
                ArgumentLimits::new(100, NESTING_LIMIT)
            ),
            None
        );
    }
}
