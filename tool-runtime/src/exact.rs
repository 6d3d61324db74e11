//! Parameter types whose `Deserialize` checks everything their schema says.
//!
//! For `i64` the schema is `{"type": "integer"}` with `i64`'s bounds, and serde accepts exactly
//! the JSON integers in those bounds; for `String` the schema is `{"type": "string"}`, and
//! serde accepts exactly strings. When every parameter of a tool is such a type, the generated
//! argument struct (which denies unknown fields, and requires what the schema requires) accepts
//! no object the schema refuses: deserializing it is validating it. Such a tool's arguments go
//! straight through serde, and anything serde refuses takes the full path, which names every
//! violation. serde may refuse more than the schema (`1.0` for an integer, a repeated key in
//! JSON text); the full path then decides, as it always did.
//!
//! Only types of the standard library and `serde_json::Value` are listed, since a user type's
//! schema can say more than its `Deserialize` checks (a `#[schemars(range(max = 10))]`, a
//! custom schema). Any other type keeps the fused walk, which checks the schema itself.
//!
//! The generated code asks with the autoref probe: `(&Probe::<T>::new()).exact()` is `true`
//! when `T: ExactSchema` and `false` otherwise, decided at compile time.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use serde_json::Value;

/// A type whose `Deserialize`, from JSON, accepts only what its JSON Schema admits.
///
/// Sealed: only the types listed here are, since a wrong entry would let arguments through
/// unchecked.
pub trait ExactSchema: sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! exact {
    ($($ty:ty)*) => {$(
        impl sealed::Sealed for $ty {}
        impl ExactSchema for $ty {}
    )*};
}

exact! {
    bool i8 i16 i32 i64 isize u8 u16 u32 u64 usize f64 String Value
}

/// `null` or the inner type's values: the schema adds `null` to the inner one.
impl<T: ExactSchema> ExactSchema for Option<T> {}
impl<T: ExactSchema> sealed::Sealed for Option<T> {}

/// An array whose items are the inner type's values.
impl<T: ExactSchema> ExactSchema for Vec<T> {}
impl<T: ExactSchema> sealed::Sealed for Vec<T> {}

/// An object whose values are the inner type's values (`additionalProperties`). JSON keys are
/// strings, and a repeated key keeps its last value in the map as in a parsed `Value`.
impl<T: ExactSchema> ExactSchema for HashMap<String, T> {}
impl<T: ExactSchema> sealed::Sealed for HashMap<String, T> {}

/// The same, sorted.
impl<T: ExactSchema> ExactSchema for BTreeMap<String, T> {}
impl<T: ExactSchema> sealed::Sealed for BTreeMap<String, T> {}

/// Asks whether `T` is [`ExactSchema`], where the generated code knows `T`.
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// The probe for `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(PhantomData)
    }
}

/// Chosen by method lookup first, when `T: ExactSchema`.
pub trait IsExact {
    /// `true`: `T`'s `Deserialize` checks all its schema says.
    #[inline(always)]
    fn exact(&self) -> bool {
        true
    }
}

impl<T: ExactSchema + ?Sized> IsExact for Probe<T> {}

/// Chosen through one more reference, for every other `T`.
pub trait NotExact {
    /// `false`: `T`'s schema may say more than its `Deserialize` checks.
    #[inline(always)]
    fn exact(&self) -> bool {
        false
    }
}

impl<T: ?Sized> NotExact for &Probe<T> {}

#[cfg(test)]
// The probes are called as generated code calls them: the borrow picks the fallback when the
// first trait does not apply, which clippy cannot tell from a needless one.
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;

    struct Custom;

    // The borrows are the probe: autoref specialization picks `IsExact` for `Probe<T>` and falls
    // back to `NotExact` for `&Probe<T>`, as the generated code calls it.
    #[allow(clippy::needless_borrow)]
    #[test]
    fn the_probe_tells_listed_types_from_others() {
        assert!((&Probe::<i64>::new()).exact());
        assert!((&Probe::<Option<Vec<String>>>::new()).exact());
        assert!(!(&Probe::<Custom>::new()).exact());
        assert!(!(&Probe::<Vec<Custom>>::new()).exact());
        assert!(!(&Probe::<f32>::new()).exact());
        assert!((&Probe::<HashMap<String, u8>>::new()).exact());
        assert!(!(&Probe::<HashMap<String, Custom>>::new()).exact());
    }
}
