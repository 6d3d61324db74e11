//! How one run goes: its limits, stop conditions, tool selection and cancellation.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::context::RunContext;
use crate::result::Step;
use tool_model::message::Message;
use tool_model::structured::ResponseFormat;
use tool_model::ToolChoice;

/// A condition checked after every step that ran tools: `true` stops the run.
pub type StopPredicate = Arc<dyn Fn(&Step) -> bool + Send + Sync>;

/// The options of one run. `RunOptions::default()` is 20 steps, then one last request without
/// tools for an answer; up to 8 calls at once; a stop after 3 steps in a row whose calls all
/// failed; a warning at the 3rd identical call in a row and a stop at the 4th.
///
/// ```
/// use tool_agent::{RunOptions, ToolChoice};
///
/// let options = RunOptions::default()
///     .max_steps(5)
///     .stop_at_tool("submit")
///     .token_budget(20_000)
///     .tool_choice(ToolChoice::Required);
/// assert_eq!(options.max_steps, 5);
/// ```
#[derive(Clone)]
pub struct RunOptions {
    /// Requests that may offer tools; 20 by default.
    pub max_steps: usize,
    /// Whether, once `max_steps` steps have run tools, one more request is made without tools
    /// so that the run ends with an answer; `true` by default.
    pub answer_at_limit: bool,
    /// The run stops after a step that called one of these tools; its output is the final text.
    pub stop_at_tools: Vec<String>,
    /// The run stops after the step at which the usage reaches this many tokens (input and
    /// output).
    pub token_budget: Option<u64>,
    /// The run stops after a step for which this returns `true`.
    pub stop_when: Option<StopPredicate>,
    /// The tool choice of the first request. `Required` and a named tool apply to the first
    /// request only (the model would otherwise never stop calling tools); later ones are `Auto`.
    pub tool_choice: ToolChoice,
    /// How many calls of one response run at once; destructive tools run one at a time anyway.
    pub max_concurrency: usize,
    /// How many tool calls the run may make in all; `None`, the default, sets no limit. The
    /// calls over it are not run (the model is told), and the next request, without tools,
    /// asks for the answer (none with [`answer_at_limit`](Self::answer_at_limit) off): the run
    /// ends with [`StopReason::ToolCallLimit`](crate::StopReason::ToolCallLimit).
    pub max_tool_calls: Option<usize>,
    /// How many tool calls one answer of the model may make; 128 by default. An answer with
    /// more is refused whole, before any of its calls runs, as the model's fault
    /// ([`RunFailure::Model`](crate::RunFailure) with
    /// [`ModelError::Malformed`](crate::ModelError::Malformed) naming the cap): a model that
    /// answers with 100,000 calls would otherwise run them all and send every result back.
    pub max_calls_per_answer: usize,
    /// How many bytes of one call's result the model is sent, its attachments' data (images, audio, files) included;
    /// 100,000 by default (some 25,000 tokens). A longer text is cut in the middle, its head
    /// and tail kept on line ends, with a line that says how many bytes and lines were left
    /// out and names this setting; attachments that do not fit are left out and named. The whole
    /// result stays in the [`CallRecord`](crate::CallRecord), for the program.
    /// `usize::MAX` sends every result whole.
    pub max_result_bytes: usize,
    /// How many bytes of results cut by [`max_result_bytes`](Self::max_result_bytes) the run
    /// keeps whole, in all; 0, the default, keeps none. When it is not 0 the run offers a
    /// tool of its own, [`READ_RESULT`](crate::READ_RESULT) (`read_result(id, offset,
    /// length)`), and a cut result's note gives its id, so that the model can read any part
    /// of it, a part at most `max_result_bytes` long. Text only: attachments left out stay out.
    /// Kept results live as long as the run (not in a stored [`RunState`](crate::RunState)):
    /// after [`Agent::resume`](crate::Agent::resume) an id of before is unknown, and said to be.
    pub kept_result_bytes: usize,
    /// How many calls in a row of one tool the model may make again after a call that came
    /// back with invalid arguments or [`ToolError::Retry`](tool_core::ToolError::Retry); 3 by
    /// default, and a tool's own `max_retries` (`#[ai_tool(max_retries = N)]`) instead when it
    /// has one. A call of the tool that succeeds starts the count again; past the budget the
    /// tool is not run again in the run, and the model is told why. Other failures (`Failed`, time limits) do not count: the run-wide
    /// [`max_failed_steps`](Self::max_failed_steps) holds for them.
    pub max_retries: usize,
    /// Whether arguments that are not valid JSON are mended, for a small set of slips
    /// ([`tool_core::repair`]: a code fence, trailing commas, single quotes, JSON cut short),
    /// before the call runs; `true` by default. The call's record says so
    /// ([`CallRecord::repaired`](crate::CallRecord::repaired)).
    pub repair_json: bool,
    /// Whether the model may call several tools in one answer (see
    /// [`ModelRequest::parallel_tool_calls`](crate::ModelRequest::parallel_tool_calls)); `None`,
    /// the default, leaves it to the API.
    pub parallel_tool_calls: Option<bool>,
    /// The run stops with [`RunFailure::TooManyFailedSteps`](crate::RunFailure) after this many
    /// steps in a row whose every call failed; 3 by default, 0 never stops.
    pub max_failed_steps: usize,
    /// The same call (name and arguments) made this many times in a row is not run again: the
    /// model is warned, and one more stops the run with
    /// [`RunFailure::RepeatedCall`](crate::RunFailure); 3 by default, 0 never stops.
    pub repeat_limit: usize,
    /// Cancelling this token ends the model request and the running tools; every call left
    /// gets a "cancelled" result, so the transcript stays valid.
    pub cancellation: Option<CancellationToken>,
    /// The tools of this run instead of the agent's executor: an executor of any
    /// [`Toolset`](tool_runtime::Toolset) (an imported MCP server's tools, a retriever's pick,
    /// a filtered or renamed set), built once and given to the runs that use it. `None`, the
    /// default, runs with the agent's. The agent's rules still choose which of its tools are
    /// offered; a run resumed from a stored state must be given the same tools.
    pub tools: Option<tool_runtime::Executor>,
    /// Selectable tools offered in this run, by name.
    pub selected_tools: Vec<String>,
    /// What the purpose gates read.
    pub context: RunContext,
    /// Earlier messages of the conversation, sent before the input.
    pub history: Vec<Message>,
    /// A JSON Schema the final answer must follow: asked of the model with every request
    /// (each API's structured output), then checked; the object is
    /// [`RunResult::output`](crate::RunResult::output).
    pub output: Option<ResponseFormat>,
    /// How many times the model may answer again after an answer that does not follow
    /// `output`, told what is wrong; 1 by default. Each try is a step, so the last request
    /// at a step or tool-call limit gets no other try.
    pub output_retries: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_steps: 20,
            answer_at_limit: true,
            stop_at_tools: Vec::new(),
            token_budget: None,
            stop_when: None,
            tool_choice: ToolChoice::Auto,
            max_concurrency: 8,
            max_tool_calls: None,
            max_calls_per_answer: Self::DEFAULT_MAX_CALLS_PER_ANSWER,
            max_result_bytes: Self::DEFAULT_MAX_RESULT_BYTES,
            kept_result_bytes: 0,
            max_retries: Self::DEFAULT_MAX_RETRIES,
            repair_json: true,
            parallel_tool_calls: None,
            max_failed_steps: 3,
            repeat_limit: 3,
            cancellation: None,
            tools: None,
            selected_tools: Vec::new(),
            context: RunContext::default(),
            history: Vec::new(),
            output: None,
            output_retries: 1,
        }
    }
}

impl RunOptions {
    /// The default of [`RunOptions::max_calls_per_answer`].
    pub const DEFAULT_MAX_CALLS_PER_ANSWER: usize = 128;

    /// The default of [`RunOptions::max_result_bytes`].
    pub const DEFAULT_MAX_RESULT_BYTES: usize = 100_000;

    /// Sets [`RunOptions::max_result_bytes`].
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// Sets [`RunOptions::kept_result_bytes`]: cut results kept whole, up to `bytes` in all,
    /// for the model to read through [`READ_RESULT`](crate::READ_RESULT).
    pub fn kept_result_bytes(mut self, bytes: usize) -> Self {
        self.kept_result_bytes = bytes;
        self
    }

    /// The default of [`RunOptions::max_retries`].
    pub const DEFAULT_MAX_RETRIES: usize = 3;

    /// Sets [`RunOptions::max_retries`].
    pub fn max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets [`RunOptions::repair_json`].
    pub fn repair_json(mut self, on: bool) -> Self {
        self.repair_json = on;
        self
    }

    /// Sets [`RunOptions::max_calls_per_answer`].
    pub fn max_calls_per_answer(mut self, calls: usize) -> Self {
        self.max_calls_per_answer = calls;
        self
    }

    /// Sets [`RunOptions::max_steps`].
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps;
        self
    }

    /// Sets [`RunOptions::answer_at_limit`].
    pub fn answer_at_limit(mut self, answer: bool) -> Self {
        self.answer_at_limit = answer;
        self
    }

    /// Adds a tool to [`RunOptions::stop_at_tools`].
    pub fn stop_at_tool(mut self, name: impl Into<String>) -> Self {
        self.stop_at_tools.push(name.into());
        self
    }

    /// Sets [`RunOptions::token_budget`].
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens);
        self
    }

    /// Sets [`RunOptions::stop_when`].
    pub fn stop_when(mut self, predicate: impl Fn(&Step) -> bool + Send + Sync + 'static) -> Self {
        self.stop_when = Some(Arc::new(predicate));
        self
    }

    /// Sets [`RunOptions::tool_choice`].
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Sets [`RunOptions::max_tool_calls`].
    pub fn max_tool_calls(mut self, calls: usize) -> Self {
        self.max_tool_calls = Some(calls);
        self
    }

    /// Sets [`RunOptions::output`]: the final answer is a JSON object that follows
    /// `format`'s schema, checked, or the run fails with
    /// [`RunFailure::Output`](crate::RunFailure::Output).
    pub fn output(mut self, format: ResponseFormat) -> Self {
        self.output = Some(format);
        self
    }

    /// Sets [`RunOptions::output_retries`].
    pub fn output_retries(mut self, retries: usize) -> Self {
        self.output_retries = retries;
        self
    }

    /// Sets [`RunOptions::parallel_tool_calls`]: `false` asks the model for one call per
    /// answer, where its API can be asked.
    pub fn parallel_tool_calls(mut self, allowed: bool) -> Self {
        self.parallel_tool_calls = Some(allowed);
        self
    }

    /// Sets [`RunOptions::max_concurrency`] (at least 1).
    pub fn max_concurrency(mut self, calls: usize) -> Self {
        self.max_concurrency = calls.max(1);
        self
    }

    /// Sets [`RunOptions::max_failed_steps`].
    pub fn max_failed_steps(mut self, steps: usize) -> Self {
        self.max_failed_steps = steps;
        self
    }

    /// Sets [`RunOptions::repeat_limit`].
    pub fn repeat_limit(mut self, calls: usize) -> Self {
        self.repeat_limit = calls;
        self
    }

    /// Sets [`RunOptions::cancellation`].
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Sets [`RunOptions::tools`]: this run's tools instead of the agent's.
    pub fn tools(mut self, executor: tool_runtime::Executor) -> Self {
        self.tools = Some(executor);
        self
    }

    /// Offers a selectable tool in this run.
    pub fn select(mut self, name: impl Into<String>) -> Self {
        self.selected_tools.push(name.into());
        self
    }

    /// Sets [`RunOptions::context`].
    pub fn context(mut self, context: RunContext) -> Self {
        self.context = context;
        self
    }

    /// Sets [`RunOptions::history`].
    pub fn history(mut self, messages: Vec<Message>) -> Self {
        self.history = messages;
        self
    }
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("max_steps", &self.max_steps)
            .field("answer_at_limit", &self.answer_at_limit)
            .field("stop_at_tools", &self.stop_at_tools)
            .field("token_budget", &self.token_budget)
            .field("stop_when", &self.stop_when.is_some())
            .field("tool_choice", &self.tool_choice)
            .field("max_concurrency", &self.max_concurrency)
            .field("max_tool_calls", &self.max_tool_calls)
            .field("max_calls_per_answer", &self.max_calls_per_answer)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("output", &self.output.as_ref().map(|f| &f.name))
            .field("output_retries", &self.output_retries)
            .field("max_failed_steps", &self.max_failed_steps)
            .field("repeat_limit", &self.repeat_limit)
            .field("cancellation", &self.cancellation)
            .field("tools", &self.tools.as_ref().map(|exec| exec.len()))
            .field("selected_tools", &self.selected_tools)
            .field("context", &self.context)
            .field("history", &self.history.len())
            .finish()
    }
}
