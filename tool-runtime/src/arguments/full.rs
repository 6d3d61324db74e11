//! The Full stage: `jsonschema`, every violation named; and the [`ArgumentValidator`] that holds
//! a tool's compiled checkers for every stage.

use serde_json::Value;
use tool_core::schema::{SchemaError, SchemaLimits};
use tool_core::ToolError;

use super::budget::ArgumentLimits;
use super::raw::fits;
use super::report;
use super::subset::{self, SubsetChecker};

/// A tool's arguments schema, compiled once at `build()` into what checks it: `jsonschema` (the
/// reference, and the Full stage) and, when the schema is in its subset, the [`SubsetChecker`]
/// (the Validating stage, and quick verdicts).
pub(crate) struct ArgumentValidator {
    validator: jsonschema::Validator,
    /// The subset checker, when the schema is in its subset.
    subset: Option<SubsetChecker>,
}

impl ArgumentValidator {
    /// Compiles `schema`, checking it against `limits` and its meta-schema first.
    pub(crate) fn compile(schema: &Value, limits: &SchemaLimits) -> Result<Self, SchemaError> {
        tool_core::schema::check_is_schema_within(schema, limits)?;
        let validator = validator_for(schema)?;
        Ok(ArgumentValidator {
            validator,
            subset: SubsetChecker::compile(schema),
        })
    }

    /// The checker of the Validating stage, when the schema is in its subset.
    #[inline]
    pub(super) fn subset(&self) -> Option<&SubsetChecker> {
        self.subset.as_ref()
    }

    /// Whether `args` are valid.
    pub(crate) fn is_valid(&self, args: &Value) -> bool {
        match &self.subset {
            Some(subset) => subset.is_valid(args),
            None => self.validator.is_valid(args),
        }
    }

    /// Checks `args`; on failure, every violation with its JSON pointer, in the schema's words
    /// (see [`report`]). `schema` is the schema this was compiled from.
    pub(crate) fn check(&self, tool: &str, schema: &Value, args: &Value) -> Result<(), ToolError> {
        if self.is_valid(args) {
            return Ok(());
        }
        Err(ToolError::InvalidArguments {
            tool: tool.to_owned(),
            violations: report::violations(self.validator.iter_errors(args), schema),
        })
    }
}

/// The `jsonschema` validator for a schema, with one keyword of ours: `type`, for which an
/// integer is written as one (`1`, not `1.0` or `1e3`), as serde's integer types require, so
/// that what the schema admits is what the tool's types take.
pub(crate) fn validator_for(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    tool_core::schema::validator_options()
        .with_keyword("type", |_, value, _| {
            let types = subset::type_set(value)
                .ok_or_else(|| jsonschema::ValidationError::schema("`type` names no JSON type"))?;
            Ok(Box::new(TypeKeyword {
                types,
                words: subset::type_words(types),
            }))
        })
        .build(schema)
        .map_err(|e| SchemaError::Uncompilable {
            message: e.to_string(),
        })
}

/// The `type` keyword, with integers as serde's integer types take them.
struct TypeKeyword {
    types: u8,
    /// What the type is, for messages: "an integer", "a string or null".
    words: String,
}

impl<'i> jsonschema::Keyword<'i> for TypeKeyword {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            return Ok(());
        }
        Err(jsonschema::ValidationError::custom(format!(
            "{} is not {}",
            report::quote(instance),
            self.words
        )))
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        subset::type_of(instance) & self.types != 0
    }
}

/// What [`Executor::validate`](crate::Executor::validate) answers: the Full stage's verdict on a
/// value, without taking it. The value is copied only when it is not valid as it is.
pub(crate) fn check_value(
    tool: &str,
    schema: &ArgumentValidator,
    parameters: &Value,
    args: &Value,
    limits: ArgumentLimits,
) -> Result<(), ToolError> {
    fits(tool, args, limits)?;
    if schema.is_valid(args) {
        return Ok(());
    }
    verdict(tool, schema, parameters, &mut args.clone())
}

/// The schema's verdict on arguments within the limits.
///
/// A strict-mode model writes `null` for an optional property it leaves out; that is accepted
/// as absent, so such nulls are dropped before the violations are named: only what would still
/// be wrong is reported. Tried only after a failure, so valid calls pay nothing.
pub(super) fn verdict(
    tool: &str,
    schema: &ArgumentValidator,
    parameters: &Value,
    args: &mut Value,
) -> Result<(), ToolError> {
    if schema.is_valid(args) {
        return Ok(());
    }
    tool_core::schema::drop_optional_nulls(parameters, args);
    schema.check(tool, parameters, args)
}
