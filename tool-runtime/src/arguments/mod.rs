//! A call's arguments, from what the caller gave to the tool's parameter struct: raw input, then
//! the size budget, then a parse in one of three stages.
//!
//! # A call, step by step
//!
//! `executor.execute("add", r#"{"a": 1, "b": 2}"#)` hands over JSON text, an
//! [`IntoArguments`]. The executor finds the tool and wraps the text, still where the caller keeps
//! it, in an [`Arguments`] together with the tool's [`ArgumentValidator`] (compiled at `build()`)
//! and the executor's size cap. The code `#[ai_tool]` generated for the tool calls
//! `parse_args`, which picks a stage:
//!
//! 1. **Raw input** ([`raw`]): a value (owned, lent or borrowed) or text, read in place. Nothing
//!    is copied or parsed into a `Value` unless the Full stage needs it.
//! 2. **Size budget** ([`budget`]): text longer than the cap, a value whose compact JSON is, or
//!    either nested as deep as the executor's nesting limit (at most
//!    [`NESTING_LIMIT`](budget::NESTING_LIMIT) levels), goes no further than the Full stage, which
//!    refuses it with `ArgumentsTooLarge` or `InvalidArguments`.
//! 3. **Parse**, in the first stage that applies:
//!    - **Exact** ([`exact`]): every parameter's type is one whose `Deserialize` checks all its
//!      schema says (`i64`, `String`, `Vec<bool>`...), so serde alone reads the arguments.
//!      Chosen at compile time by the probes, which hand the generated code an [`ExactStage`].
//!    - **Validating** ([`validating`]): any other tool whose schema is in the subset the
//!      [`SubsetChecker`](subset::SubsetChecker) follows. A checking deserializer wraps serde's,
//!      and each token is checked against the schema (and counted in the budget) on its way into
//!      the parameter struct: one pass, no intermediate `Value`.
//!    - **Full** ([`full`]): whatever the first two did not take: arguments they refused, schemas
//!      outside the subset, dynamic tools. The arguments become a `Value`, `jsonschema` names
//!      every violation (after dropping the `null`s strict-mode models write for optional
//!      properties), and serde then deserializes what passed.
//!
//! The Exact and Validating stages only ever accept or pass the call on: they never refuse
//! it themselves. So a call is refused only by the Full stage, with the same error whichever
//! stage saw it first, and a stage that accepts must agree with the Full stage (the differential
//! tests in `validating` and `subset` hold them to it).

mod budget;
mod distinct;
mod exact;
mod full;
#[cfg(test)]
mod random;
mod raw;
mod report;
mod subset;
mod validating;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_core::ToolError;

pub(crate) use self::budget::{ArgumentLimits, NESTING_LIMIT};
pub use self::exact::{
    DeserializeChecksSchema, ExactStage, IsExact, NotExact, Probe, ValidatingStage,
};
pub(crate) use self::full::ArgumentValidator;
use self::raw::{invalid, non_empty, View};
pub use self::raw::{IntoArguments, RawArguments};

/// A call's arguments with what checks them: what the code generated for a tool receives, and
/// reads with [`parse_args`](crate::macro_support::parse_args).
///
/// It borrows the arguments where the call keeps them: a valid call reads them in place, and
/// only the Full stage takes an owned value out. Reachable by no name outside this crate but
/// through the macros' hidden re-exports.
pub struct Arguments<'a, 'r> {
    raw: &'a mut RawArguments<'r>,
    tool: &'a str,
    schema: &'a ArgumentValidator,
    /// The schema as JSON, for the strict-mode null leniency.
    parameters: &'a Value,
    limits: ArgumentLimits,
}

impl<'a, 'r> Arguments<'a, 'r> {
    pub(crate) fn new(
        raw: &'a mut RawArguments<'r>,
        tool: &'a str,
        schema: &'a ArgumentValidator,
        parameters: &'a Value,
        limits: ArgumentLimits,
    ) -> Self {
        Arguments {
            raw,
            tool,
            schema,
            parameters,
            limits,
        }
    }

    /// Checks the arguments against the tool's schema and deserializes them: the Exact stage
    /// when the probes gave an [`ExactStage`], otherwise the Validating stage, and the Full
    /// stage for whatever those did not take. Anything invalid is `InvalidArguments`.
    #[inline]
    pub(crate) fn parse<T: DeserializeOwned, S: Stage>(self, _stage: S) -> Result<T, ToolError> {
        // By the stage's type: the other stage's parse is not instantiated for `T`.
        S::parse_in(self)
    }

    /// The Exact stage, then the Full stage for what it did not take.
    #[inline(never)]
    fn parse_exact<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        self.parse_or_full(|text, _| exact::parse_text(text), exact::parse_value)
    }

    /// The Validating stage, when the schema is in its subset, then the Full stage for what
    /// it did not take.
    #[inline(never)]
    fn parse_validating<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        match self.schema.subset() {
            Some(subset) => self.parse_or_full(
                |text, limits| validating::parse_text(subset, non_empty(text), limits),
                |value, limits| validating::parse_value(subset, value, limits),
            ),
            None => self.parse_full(),
        }
    }

    /// The Exact or the Validating stage, from text within the limits or from a value and the
    /// limits; whatever it does not take (`None`) goes to the Full stage.
    #[inline(always)]
    fn parse_or_full<T: DeserializeOwned>(
        self,
        text: impl FnOnce(&str, ArgumentLimits) -> Option<T>,
        value: impl FnOnce(&Value, ArgumentLimits) -> Option<T>,
    ) -> Result<T, ToolError> {
        let limits = self.limits;
        let parsed = match self.raw.view() {
            // Over the size budget or nested too deeply: the Full stage refuses it.
            View::Text(raw) if raw.len() > limits.bytes || limits.text_too_deep(raw) => None,
            View::Text(raw) => text(raw, limits),
            View::Value(raw) => value(raw, limits),
        };
        match parsed {
            Some(parsed) => Ok(parsed),
            None => self.parse_full(),
        }
    }

    /// The Full stage: every violation named, then serde's own refusals. Kept out of line, so
    /// that the first two stages inline small into each tool.
    #[inline(never)]
    fn parse_full<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        let tool = self.tool;
        let value = self.into_checked_value()?;
        // Read from the value borrowed, as the Exact stage reads one: one deserializer of a
        // value per parameter struct, not two (its strings are copied either way).
        T::deserialize(&value).map_err(|e| invalid(tool, e.to_string()))
    }

    /// The Full stage's checks alone: the arguments as a value, within the size budget and valid
    /// against the schema. Dynamic tools take their arguments so.
    pub(crate) fn into_checked_value(self) -> Result<Value, ToolError> {
        let raw = std::mem::take(self.raw);
        let mut args = raw.into_value(self.tool, self.limits)?;
        full::verdict(self.tool, self.schema, self.parameters, &mut args)?;
        Ok(args)
    }
}

/// A stage of the parse, as a type: the probes of a tool's parameters combine into one, and
/// the tool's parameter struct is read by that stage's code alone (one deserializer per
/// stage, not every stage's). Sealed: the Exact and the Validating stages.
pub trait Stage: Copy + sealed::Stages {
    /// This stage and `other`: the Exact stage when both are.
    type And<S: Stage>: Stage;
    /// This stage and `other`.
    fn and<S: Stage>(self, other: S) -> Self::And<S>;
    /// This stage, unless a parameter's type is an `Option` its schema does not say is one
    /// (serde would let it be left out, which its schema refuses): then the Validating stage.
    type Unless<O: Optionality>: Stage;
    /// This stage, unless `optionality` says the parameter is an `Option`.
    fn unless_option<O: Optionality>(self, optionality: O) -> Self::Unless<O>;
    /// Reads `args` in this stage (and the Full stage for what it does not take).
    #[doc(hidden)]
    fn parse_in<T: DeserializeOwned>(args: Arguments<'_, '_>) -> Result<T, ToolError>;
}

mod sealed {
    pub trait Stages {}
    impl Stages for super::ExactStage {}
    impl Stages for super::ValidatingStage {}

    pub trait Optionalities {}
    impl Optionalities for super::IsOptional {}
    impl Optionalities for super::NotOptional {}
}

/// Whether a parameter's type is an `Option` ([`IsOptional`] or [`NotOptional`]), as the
/// option probe answers.
pub trait Optionality: sealed::Optionalities {
    /// The Exact stage narrowed by it.
    type Narrowed: Stage;
    /// The Exact stage narrowed by it: kept for a type that is no `Option`.
    fn narrow(exact: ExactStage) -> Self::Narrowed;
}

/// The parameter's type is an `Option`.
#[derive(Clone, Copy, Debug)]
pub struct IsOptional;

/// The parameter's type is no `Option`.
#[derive(Clone, Copy, Debug)]
pub struct NotOptional;

impl Optionality for IsOptional {
    type Narrowed = ValidatingStage;
    #[inline(always)]
    fn narrow(_exact: ExactStage) -> ValidatingStage {
        ValidatingStage
    }
}

impl Optionality for NotOptional {
    type Narrowed = ExactStage;
    #[inline(always)]
    fn narrow(exact: ExactStage) -> ExactStage {
        exact
    }
}

impl Stage for ExactStage {
    type And<S: Stage> = S;
    #[inline(always)]
    fn and<S: Stage>(self, other: S) -> S {
        other
    }
    type Unless<O: Optionality> = O::Narrowed;
    #[inline(always)]
    fn unless_option<O: Optionality>(self, _optionality: O) -> O::Narrowed {
        O::narrow(self)
    }
    fn parse_in<T: DeserializeOwned>(args: Arguments<'_, '_>) -> Result<T, ToolError> {
        args.parse_exact()
    }
}

impl Stage for ValidatingStage {
    type And<S: Stage> = ValidatingStage;
    #[inline(always)]
    fn and<S: Stage>(self, _other: S) -> ValidatingStage {
        ValidatingStage
    }
    type Unless<O: Optionality> = ValidatingStage;
    #[inline(always)]
    fn unless_option<O: Optionality>(self, _optionality: O) -> ValidatingStage {
        ValidatingStage
    }
    fn parse_in<T: DeserializeOwned>(args: Arguments<'_, '_>) -> Result<T, ToolError> {
        args.parse_validating()
    }
}

/// Checks arguments as a call would, without a parameter struct to read them into: a value
/// against the limits and the schema, text parsed first (a value is not copied when it is
/// valid).
pub(crate) fn check_raw(
    tool: &str,
    schema: &ArgumentValidator,
    parameters: &Value,
    raw: RawArguments<'_>,
    limits: ArgumentLimits,
) -> Result<(), ToolError> {
    if let View::Value(value) = raw.view() {
        return full::check_value(tool, schema, parameters, value, limits);
    }
    let mut args = raw.into_value(tool, limits)?;
    full::verdict(tool, schema, parameters, &mut args)
}
