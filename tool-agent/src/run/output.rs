//! A run's checked answer ([`RunOptions::output`](crate::RunOptions::output)): the final text
//! read as one JSON object and checked against the schema the run asked for, by the executor's
//! own argument checks. What fails is told to the model, which answers again.

use serde_json::Value;
use tool_core::{ToolError, ToolOutput};
use tool_runtime::{DynamicTool, Executor};

use tool_model::structured::{json_object, ResponseFormat};

/// The name the answer is checked under: a tool of a private executor, never offered.
const ANSWER: &str = "answer";

/// How many violations the model is told of at most.
const TOLD: usize = 20;

/// Checks answers against one schema.
pub(crate) struct OutputCheck {
    exec: Executor,
    /// The schema, for the nulls a strict-mode model writes for what it leaves out.
    schema: Value,
}

impl OutputCheck {
    /// A check against `format`'s schema; the error says why the schema cannot check anything.
    pub(crate) fn new(format: &ResponseFormat) -> Result<Self, String> {
        let answer = DynamicTool::new(
            ANSWER,
            "The run's answer",
            format.schema.clone(),
            |_, _| async { Ok(ToolOutput::empty()) },
        );
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(answer)
            .build()
            .map_err(|e| {
                let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
                format!(
                    "the output schema `{}`: {}",
                    format.name,
                    problems.join("; ")
                )
            })?;
        Ok(OutputCheck {
            exec,
            schema: format.schema.clone(),
        })
    }

    /// The answer as the JSON object the schema admits, or what to tell the model.
    pub(crate) fn check(&self, text: &str) -> Result<Value, String> {
        let Some(object) = json_object(text) else {
            return Err(
                "Your answer must be one JSON object that follows the schema you were \
                        given, and it holds none. Answer again with the JSON object alone."
                    .to_owned(),
            );
        };
        let mut answer = Value::Object(object);
        match self.exec.validate(ANSWER, &answer) {
            Ok(()) => {
                // Accepted as absent, and so left out: a type reads them as its defaults.
                tool_core::schema::drop_optional_nulls(&self.schema, &mut answer);
                Ok(answer)
            }
            Err(ToolError::InvalidArguments { violations, .. }) => {
                let mut told: Vec<String> = violations
                    .iter()
                    .take(TOLD)
                    .map(ToString::to_string)
                    .collect();
                if violations.len() > TOLD {
                    told.push(format!("and {} more", violations.len() - TOLD));
                }
                Err(format!(
                    "Your answer does not follow the schema you were given: {}. Answer again \
                     with one JSON object that follows it.",
                    told.join("; ")
                ))
            }
            Err(other) => Err(format!(
                "Your answer cannot be checked: {}",
                other.to_model_text()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check() -> OutputCheck {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": { "type": "string" },
                "celsius": { "type": "integer", "minimum": -90, "maximum": 60 }
            },
            "required": ["city", "celsius"],
            "additionalProperties": false
        });
        OutputCheck::new(&ResponseFormat::new("weather", schema)).expect("a usable schema")
    }

    #[test]
    fn an_answer_in_fences_or_text_that_follows_the_schema_is_its_object() {
        let fenced = "```json\n{\"city\": \"Lyon\", \"celsius\": 18}\n```";
        assert_eq!(
            check().check(fenced),
            Ok(json!({ "city": "Lyon", "celsius": 18 }))
        );
    }

    #[test]
    fn what_is_wrong_is_named_for_the_model() {
        let told = check()
            .check(r#"{"city": "Lyon", "celsius": 400, "wind": 3}"#)
            .unwrap_err();
        assert!(told.contains("/celsius"), "{told}");
        assert!(told.contains("wind"), "{told}");
        let told = check().check("It is 18 degrees in Lyon.").unwrap_err();
        assert!(told.contains("holds none"), "{told}");
    }

    #[test]
    fn a_schema_that_is_not_an_object_schema_is_refused_by_name() {
        let format = ResponseFormat::new("list", json!({ "type": "array" }));
        let problem = OutputCheck::new(&format).err().expect("refused");
        assert!(problem.contains("`list`"), "{problem}");
    }
}
