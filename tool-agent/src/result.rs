//! What a run gives back: its final text, transcript, steps and usage, whether it ended well
//! or not.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use tool_core::{ToolCall, ToolError, ToolOutput};

use crate::approval::Interruption;
use crate::citations::Reference;
use tool_model::message::{Message, Usage};
use tool_model::{Ending, ModelError, ToolChoice};

/// A finished run.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// The final answer: the model's last text, or the output of the tool that stopped the run
    /// ([`StopReason::ToolCalled`]).
    pub text: String,
    /// The whole conversation: the history given, the input, and every message since, in the
    /// neutral form each model client translates to its API.
    pub transcript: Vec<Message>,
    /// Every model request and the calls it made, in order.
    pub steps: Vec<Step>,
    /// Tokens used, summed over all requests.
    pub usage: Usage,
    /// Why the run ended.
    pub stop: StopReason,
    /// The references the tools recorded in the run's
    /// [`InvocationScope`](crate::InvocationScope), by number: give them with `text` to
    /// [`citations::finalize`](crate::citations::finalize).
    pub references: BTreeMap<usize, Reference>,
    /// For a run stopped by calls waiting for approval ([`StopReason::Interrupted`]): those
    /// calls, and the state [`Agent::resume`](crate::Agent::resume) goes on from. The
    /// transcript then ends with the answer whose calls wait.
    pub interruption: Option<Interruption>,
    /// With [`RunOptions::output`](crate::RunOptions::output), the model's answer as the JSON
    /// object the schema admits (read from `text`, code fences and words around it left out),
    /// when the run ended with the model's answer.
    pub output: Option<serde_json::Value>,
}

impl RunResult {
    /// [`RunResult::output`] as a `T`; an error when the run has no checked output.
    pub fn output_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.output {
            Some(answer) => T::deserialize(answer),
            None => Err(serde::de::Error::custom(
                "the run has no checked output: ask for one with RunOptions::output",
            )),
        }
    }
}

/// Why a run ended well.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling tools.
    #[default]
    Finished,
    /// `max_steps` steps ran tools. With `answer_at_limit`, one more request without tools
    /// gave the final text.
    MaxSteps {
        /// The limit.
        steps: usize,
    },
    /// A step called this tool, one of `stop_at_tools`.
    ToolCalled {
        /// The tool.
        name: String,
    },
    /// The tokens used reached the budget.
    TokenBudget {
        /// Tokens used.
        used: u64,
        /// The budget.
        budget: u64,
    },
    /// The `stop_when` predicate said so.
    Predicate,
    /// The run made [`RunOptions::max_tool_calls`](crate::RunOptions::max_tool_calls) calls;
    /// one more request without tools gave the final text.
    ToolCallLimit {
        /// The limit.
        calls: usize,
    },
    /// A hook ended the run ([`BeforeTool::Terminate`](crate::BeforeTool::Terminate) or
    /// [`AfterTool::Terminate`](crate::AfterTool::Terminate)).
    Terminated {
        /// The hook's reason.
        reason: String,
    },
    /// Calls wait for approval: see [`RunResult::interruption`]. The other calls of the same
    /// answer ran.
    Interrupted,
    /// The final answer was cut at the model's output limit: the text is what came. `reason`
    /// is the API's (`length`, `max_tokens`, `MAX_TOKENS`, `max_output_tokens`); raise the
    /// limit (`with_max_tokens`, or `with_body_field`) or ask for less.
    Truncated {
        /// The API's finish reason.
        reason: String,
    },
    /// The model declined to answer, or the API's filter stopped it: the text is the
    /// refusal's, if any. `reason` is the API's (`refusal`, `content_filter`, `SAFETY`,
    /// `blocked: ` and a Gemini prompt's `blockReason`, Bedrock's `guardrail_intervened`...).
    Declined {
        /// The API's finish reason.
        reason: String,
    },
}

/// One model request and the calls of its answer.
#[derive(Debug, Clone)]
pub struct Step {
    /// The step's number, from 0.
    pub index: usize,
    /// The tool choice the request was sent with.
    pub tool_choice: ToolChoice,
    /// The model's text, if any.
    pub text: Option<String>,
    /// The calls and their results, in call order.
    pub calls: Vec<CallRecord>,
    /// The tokens of the request.
    pub usage: Usage,
    /// How long the model took to answer.
    pub model_time: Duration,
    /// How long the calls took, all together.
    pub tools_time: Duration,
    /// Why the model stopped, in the API's words ([`ModelResponse::finish_reason`](crate::ModelResponse::finish_reason)).
    pub finish_reason: Option<String>,
    /// How the answer ended, as the client read it ([`ModelResponse::ending`](crate::ModelResponse::ending)).
    pub ending: Ending,
}

impl Step {
    /// Whether the step made calls and every one failed (or its output says it is an error).
    pub fn all_calls_failed(&self) -> bool {
        !self.calls.is_empty() && self.calls.iter().all(CallRecord::failed)
    }
}

/// One tool call, what came of it, and how long it took.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// The call, as the model made it.
    pub call: ToolCall,
    /// Its output, or why there is none.
    pub result: Result<ToolOutput, ToolError>,
    /// How long it took, from the step's start of calls to its end.
    pub elapsed: Duration,
    /// The arguments the tool ran with instead of the model's, and what mended them; `None`
    /// when it ran with the model's (or did not run).
    pub repaired: Option<Repaired>,
}

/// Arguments mended before a call ran ([`CallRecord::repaired`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Repaired {
    /// The arguments the tool ran with.
    pub arguments: serde_json::Value,
    /// What mended them.
    pub by: RepairedBy,
}

/// What mended a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RepairedBy {
    /// The loop's JSON repair ([`RunOptions::repair_json`](crate::RunOptions::repair_json)):
    /// the arguments were not valid JSON, and these mends made them so.
    Json(Vec<tool_core::repair::JsonFix>),
    /// [`RunHooks::repair_call`](crate::RunHooks::repair_call).
    Hook,
}

impl CallRecord {
    /// Whether the call failed, or its output says it is an error.
    pub fn failed(&self) -> bool {
        match &self.result {
            Ok(output) => output.is_error,
            Err(_) => true,
        }
    }
}

/// A run that ended before an answer. It keeps everything the run did ([`RunError::partial`]):
/// the transcript (valid for the API: every call has a result), the steps and the usage.
#[derive(Debug)]
pub struct RunError {
    /// What ended the run.
    pub failure: RunFailure,
    /// The run up to that point; its `text` is the model's last text, if any, and its `stop`
    /// says nothing (`Finished`): the failure is why it stopped.
    pub partial: Box<RunResult>,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the run stopped after {} step(s): {}",
            self.partial.steps.len(),
            self.failure
        )
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.failure)
    }
}

/// Why a run ended before an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunFailure {
    /// A model request failed (after the client's retries).
    #[error("the model request of step {step} failed")]
    Model {
        /// The step, from 0.
        step: usize,
        /// The client's error.
        #[source]
        error: ModelError,
    },
    /// Too many steps in a row had only failed calls.
    #[error("{steps} steps in a row had only failed tool calls; the last error: {last}")]
    TooManyFailedSteps {
        /// How many.
        steps: usize,
        /// The last failed call's error, for the developer.
        last: String,
    },
    /// The model kept making the same call.
    #[error("`{name}` was called with the same arguments {times} times in a row")]
    RepeatedCall {
        /// The tool.
        name: String,
        /// How many times in a row.
        times: usize,
    },
    /// The run's cancellation token was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// The decisions given to [`Agent::resume`](crate::Agent::resume) do not fit the pending
    /// calls (another call id, other arguments, a call left without a decision).
    #[error("the decisions do not fit the pending calls: {0}")]
    Approval(String),
    /// Choosing the tools to offer failed (a retriever's error).
    #[error("choosing the tools to offer failed: {0}")]
    ToolSelection(String),
    /// The answer did not follow the output schema ([`RunOptions::output`](crate::RunOptions::output))
    /// after the retries, or the schema cannot check anything.
    #[error("no answer followed the output schema: {0}")]
    Output(String),
}
