use serde_json::Value;
use tool_core::{ToolError, Violation};

/// A tool's schema compiled once into a validator.
pub(crate) struct CompiledSchema {
    validator: jsonschema::Validator,
}

impl CompiledSchema {
    /// Compiles `schema`, checking it against its meta-schema first.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        tool_core::schema::check_is_schema(schema)?;
        let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
        Ok(CompiledSchema { validator })
    }

    /// Checks `args`; on failure, every violation with its JSON pointer.
    pub(crate) fn check(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let violations = self
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
