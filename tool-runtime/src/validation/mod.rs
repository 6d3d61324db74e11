mod fast;

use serde_json::Value;
use tool_core::{ToolError, Violation};

use fast::FastSchema;

/// A tool's schema compiled once into a validator.
pub(crate) struct CompiledSchema {
    validator: jsonschema::Validator,
    /// The fast checker, when the schema is in its subset.
    fast: Option<FastSchema>,
}

impl CompiledSchema {
    /// Compiles `schema`, checking it against its meta-schema first.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        tool_core::schema::check_is_schema(schema)?;
        let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
        Ok(CompiledSchema {
            validator,
            fast: FastSchema::compile(schema),
        })
    }

    /// Checks `args`; on failure, every violation with its JSON pointer.
    pub(crate) fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        let valid = match &self.fast {
            Some(fast) => fast.is_valid(args),
            None => self.validator.is_valid(args),
        };
        if valid {
            return Ok(());
        }
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(args)
            .map(|e| Violation {
                pointer: e.instance_path().as_str().to_owned(),
                message: e.to_string(),
            })
            .collect();
        Err(ToolError::InvalidArguments {
            tool: tool.to_owned(),
            violations,
        })
    }
}
