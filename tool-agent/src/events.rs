//! What a streamed run yields ([`RunEvent`]).

use tool_core::ToolCall;
use tool_model::{CallDelta, Usage};

use crate::approval::PendingApproval;
use crate::result::{CallRecord, RunError, RunResult, Step};

/// What a streamed run yields, in order; [`RunEvent::Finished`] is the last.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunEvent {
    /// More of the model's text in this step.
    TextDelta {
        /// The step, from 0.
        step: usize,
        /// The text.
        text: String,
    },
    /// More of a tool call of this step's answer, as the model writes it: its id and name
    /// once known, and the next piece of its arguments' JSON text. The step's calls are
    /// announced afterwards ([`RunEvent::ToolCallStarted`]), assembled; a call whose name never
    /// came is not among them.
    ToolCallDelta {
        /// The step, from 0.
        step: usize,
        /// The piece: which call, and what of it.
        delta: CallDelta,
    },
    /// More of what the model thought in this step, as its API shows it, for people to read.
    ReasoningDelta {
        /// The step, from 0.
        step: usize,
        /// The text.
        text: String,
    },
    /// A call of the model's answer, arguments assembled, about to be answered: each call is
    /// announced once, before its [`RunEvent::ToolResult`]. A call that waits for approval is
    /// announced when it is decided ([`Agent::resume_stream`](crate::Agent::resume_stream)),
    /// or cancelled, not before.
    ToolCallStarted {
        /// The step, from 0.
        step: usize,
        /// The call.
        call: ToolCall,
    },
    /// A call's result, in call order.
    ToolResult {
        /// The step, from 0.
        step: usize,
        /// The call, its result and its time.
        record: CallRecord,
    },
    /// A call waits for approval; the run will end interrupted.
    ApprovalNeeded(PendingApproval),
    /// The tokens of one request.
    Usage {
        /// The step, from 0.
        step: usize,
        /// The tokens.
        usage: Usage,
    },
    /// A step ended. A step interrupted for approval ends twice: as it stopped, and whole when
    /// the run is resumed.
    StepFinished(Box<Step>),
    /// The step's answer did not follow the run's output schema
    /// ([`RunOptions::output`](crate::RunOptions::output)): the model is told what is wrong
    /// and answers again, so the text streamed for this step is not the final answer.
    OutputRejected {
        /// The step, from 0.
        step: usize,
        /// What the model is told.
        told: String,
    },
    /// The run ended: what [`Agent::run`](crate::Agent::run) would have returned.
    Finished(Box<Result<RunResult, RunError>>),
}
