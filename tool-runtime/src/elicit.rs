//! Asking the user mid-call: a tool's [`ToolContext::elicit`](crate::ToolContext::elicit)
//! goes to whoever the caller named ([`CallOptions::with_elicitor`](crate::CallOptions::with_elicitor)):
//! an MCP server sends the session's client `elicitation/create`. A call whose caller named
//! no one gets an error that says so, never an answer made up.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::ToolError;

use crate::boxed::BoxFuture;

/// What a tool asks the user: a message, and the schema of the answer (an object of
/// primitive properties, as MCP's `requestedSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Elicitation {
    /// What the user is asked, in words.
    pub message: String,
    /// The JSON Schema of the answer.
    pub schema: Value,
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Elicited {
    /// The user answered: the content, checked against the schema asked with.
    Accepted(Value),
    /// The user chose not to answer; the tool may go on without it.
    Declined,
    /// The user dismissed the question.
    Cancelled,
}

/// Who a call's questions go to: given the question, the user's answer, or why there is none.
/// Called on the tool's task; it may wait as long as the user takes (the call's time limit
/// and cancellation still hold).
pub type Elicitor =
    Arc<dyn Fn(Elicitation) -> BoxFuture<'static, Result<Elicited, String>> + Send + Sync>;

impl Elicitation {
    /// Whether `answer` may be given to this question: an accepted answer must match the
    /// schema asked with (formats checked); otherwise, what is wrong with it, in words.
    pub fn check(&self, answer: &Elicited) -> Result<(), String> {
        let Elicited::Accepted(content) = answer else {
            return Ok(());
        };
        // The schema may come from an imported server: offline, with the pattern backtrack
        // limit, and with formats checked, as the tool reads them.
        let options = tool_core::schema::validator_options().should_validate_formats(true);
        let validator = options
            .build(&self.schema)
            .map_err(|e| format!("the schema asked with is not a JSON Schema: {e}"))?;
        let problems: Vec<String> = validator
            .iter_errors(content)
            .take(5)
            .map(|e| format!("{} at `{}`", e, e.instance_path()))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the user's answer does not match the schema asked with: {}",
                problems.join("; ")
            ))
        }
    }
}

/// Checks an answer against the question: an answer is input from outside, and the tool reads
/// it as the schema says.
pub(crate) fn checked(
    tool: &str,
    question: &Elicitation,
    answer: Elicited,
) -> Result<Elicited, ToolError> {
    question
        .check(&answer)
        .map_err(|why| ToolError::failed(tool, why))?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{CallOptions, DynamicTool, Executor};
    use tool_core::{ToolErrorKind, ToolOutput};

    /// A tool that asks for an email and says what it got.
    fn executor() -> Executor {
        let ask = DynamicTool::new(
            "invoice",
            "Sends an invoice.",
            json!({ "type": "object", "properties": {} }),
            |_, ctx| async move {
                let schema = json!({
                    "type": "object",
                    "properties": { "email": { "type": "string", "format": "email" } },
                    "required": ["email"]
                });
                let answer = ctx.elicit("Which email?", schema).await?;
                Ok(ToolOutput::text(format!("{answer:?}")))
            },
        );
        Executor::builder()
            .registered_tools(false)
            .tool(ask)
            .build()
            .unwrap()
    }

    fn answering(answer: Elicited) -> CallOptions {
        let elicitor: Elicitor = Arc::new(move |question: Elicitation| {
            assert_eq!(question.message, "Which email?");
            let answer = answer.clone();
            Box::pin(async move { Ok(answer) })
        });
        CallOptions::default().with_elicitor(elicitor)
    }

    #[tokio::test]
    async fn a_question_goes_to_the_elicitor_and_its_answer_is_checked() {
        let exec = executor();
        let run = |options: CallOptions| {
            let exec = exec.clone();
            async move { exec.execute_with("invoice", json!({}), &options).await }
        };
        let accepted = Elicited::Accepted(json!({ "email": "a@example.com" }));
        let out = run(answering(accepted)).await.unwrap();
        assert!(out.to_text().contains("a@example.com"), "{}", out.to_text());
        let declined = run(answering(Elicited::Declined)).await.unwrap();
        assert_eq!(declined.to_text(), "Declined");
        // An answer off the schema is refused, never passed on.
        let bad = Elicited::Accepted(json!({ "mail": "a@example.com" }));
        let err = run(answering(bad)).await.unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::Failed);
        assert!(
            err.to_string().contains("does not match the schema"),
            "{err}"
        );
        // No one to ask: an error that says so.
        let err = run(CallOptions::default()).await.unwrap_err();
        assert!(err.to_string().contains("cannot ask the user"), "{err}");
    }
}
