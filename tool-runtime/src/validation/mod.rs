mod fast;
mod fused;
#[cfg(test)]
mod random;
mod report;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_core::ToolError;

use fast::FastSchema;
pub(crate) use fused::NUMBER_ROOM;
use fused::{Checked, Walk};

/// A tool's schema compiled once into a validator.
pub(crate) struct CompiledSchema {
    validator: jsonschema::Validator,
    /// The fast checker, when the schema is in its subset.
    fast: Option<FastSchema>,
}

impl CompiledSchema {
    /// Compiles `schema`, checking it against its meta-schema first.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        tool_core::schema::check_is_schema(schema).map_err(|e| e.to_string())?;
        let validator = validator_for(schema)?;
        Ok(CompiledSchema {
            validator,
            fast: FastSchema::compile(schema),
        })
    }

    /// Checks and deserializes a value in one walk, counting its size against `limit`. `None`
    /// when the value is not valid, or the schema is outside the fast subset, or anything else
    /// stopped the walk: the full path then says why.
    #[inline]
    pub(crate) fn parse_value<T: DeserializeOwned>(&self, args: &Value, limit: usize) -> Option<T> {
        let fast = self.fast.as_ref()?;
        let walk = Walk::new(limit);
        T::deserialize(Checked::new(args, fast, &walk)).ok()
    }

    /// Checks and deserializes JSON text in one walk; `None` as for [`Self::parse_value`].
    #[inline]
    pub(crate) fn parse_text<T: DeserializeOwned>(&self, text: &str) -> Option<T> {
        let fast = self.fast.as_ref()?;
        let walk = Walk::new(usize::MAX);
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let parsed = T::deserialize(Checked::new(&mut deserializer, fast, &walk)).ok()?;
        deserializer.end().ok()?;
        Some(parsed)
    }

    /// Whether `args` are valid.
    pub(crate) fn is_valid(&self, args: &Value) -> bool {
        match &self.fast {
            Some(fast) => fast.is_valid(args),
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
pub(crate) fn validator_for(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_keyword("type", |_, value, _| {
            let types = fast::type_set(value)
                .ok_or_else(|| jsonschema::ValidationError::schema("`type` names no JSON type"))?;
            Ok(Box::new(TypeKeyword {
                types,
                words: fast::type_words(types),
            }))
        })
        .build(schema)
        .map_err(|e| e.to_string())
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
        fast::type_of(instance) & self.types != 0
    }
}

/// Removes `null` values of properties that are optional and whose schema does not admit
/// `null`, through nested objects and arrays. Returns whether anything was removed.
pub(crate) fn drop_nulls_for_optional(schema: &Value, instance: &mut Value) -> bool {
    let mut changed = false;
    match instance {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return false;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
            map.retain(|key, value| {
                let drop = value.is_null()
                    && !required.contains(&key.as_str())
                    && properties
                        .get(key)
                        .is_some_and(|p| !tool_core::schema::admits_null(p));
                changed |= drop;
                !drop
            });
            for (key, value) in map.iter_mut() {
                if let Some(sub) = properties.get(key) {
                    changed |= drop_nulls_for_optional(sub, value);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for item in items {
                    changed |= drop_nulls_for_optional(sub, item);
                }
            }
        }
        _ => {}
    }
    changed
}
