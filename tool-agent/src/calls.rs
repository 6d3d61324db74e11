//! Running the calls of one response: only offered tools, concurrently up to a cap,
//! destructive tools one at a time in call order, results in call order.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use futures_util::future::join;
use futures_util::stream::{self, StreamExt};
use tool_core::{ToolCall, ToolError, ToolOutput};
use tool_runtime::{Answered, CallOptions, Elicitation, Executor, ReplayedQuestions};
use tracing::Instrument;

use crate::hooks::{AfterTool, BeforeTool, RepairCall, RunHooks};
use crate::kept::{KeptResults, READ_RESULT};
use crate::repeat::Verdict;
use crate::result::{CallRecord, Repaired, RepairedBy};
use crate::retries::Retries;
use crate::search::ToolSearch;
use crate::telemetry;
use tool_core::provider::tool_search::TOOL_SEARCH;
use tool_model::OfferedTools;

/// What the calls of one run are run with.
pub(crate) struct Calls<'a> {
    pub executor: Option<&'a Executor>,
    pub offered: &'a OfferedTools,
    /// The tools the request's [`ToolChoice::Allowed`](tool_model::ToolChoice::Allowed) lets
    /// the model call, when it has one: the others are declared, and refused.
    pub allowed: Option<&'a [String]>,
    /// The run's cancellation token and its invocation scope (an extension), for every call.
    pub options: CallOptions,
    /// Calls run at once, at least 1.
    pub concurrency: usize,
    pub hooks: Option<&'a dyn RunHooks>,
    /// Why a hook ended the run, if one did.
    pub terminated: Mutex<Option<String>>,
    /// The run's kept results, when it offers `read_result`, and the most a read returns.
    pub kept: Option<(&'a KeptResults, usize)>,
    /// Each tool's failed attempts in a row, in the run.
    pub retries: &'a Retries,
    /// The run's retry budget for a tool without its own.
    pub max_retries: usize,
    /// Whether arguments that are not valid JSON are mended first.
    pub repair_json: bool,
    /// Whether each call's span carries its arguments and result.
    pub trace_content: bool,
    /// The agent's tool search, which answers calls of the run's own `tool_search`.
    pub search: Option<&'a ToolSearch>,
    /// The calls that stopped at a question without an answer, by position in the calls run.
    pub questions: Mutex<Vec<(usize, Asked)>>,
}

/// A call's question without an answer, and the answers it had.
pub(crate) struct Asked {
    pub question: Elicitation,
    pub answered: Vec<Answered>,
}

impl Calls<'_> {
    /// Runs one response's calls, with the repeat guard's verdict on each and the answers to
    /// the questions each asked before (by position; none past the slice's end), and returns
    /// their records in call order. Every call gets a result, whatever happens; a call that
    /// stopped at a question gets a cancelled one, and is among [`Calls::take_questions`].
    pub(crate) async fn run(
        &self,
        calls: &[ToolCall],
        verdicts: &[Verdict],
        answers: &[Vec<Answered>],
    ) -> Vec<CallRecord> {
        let answers_of = |i: usize| answers.get(i).map_or(&[][..], Vec::as_slice);
        let (serial, parallel): (Vec<usize>, Vec<usize>) =
            (0..calls.len()).partition(|&i| self.is_destructive(&calls[i].name));
        // The futures are made here, not in the stream: a stream holding the closure would
        // make the run's future lose `Send` (the closure is not general over lifetimes).
        let started: Vec<_> = parallel
            .iter()
            .map(|&i| self.one(i, &calls[i], verdicts[i], answers_of(i)))
            .collect();
        let concurrent = stream::iter(started)
            .buffered(self.concurrency.max(1))
            .collect::<Vec<_>>();
        let one_by_one = async {
            let mut done = Vec::with_capacity(serial.len());
            for &i in &serial {
                done.push(self.one(i, &calls[i], verdicts[i], answers_of(i)).await);
            }
            done
        };
        let (concurrent, one_by_one) = join(concurrent, one_by_one).await;
        let mut slots: Vec<Option<CallRecord>> = calls.iter().map(|_| None).collect();
        let finished = parallel
            .into_iter()
            .zip(concurrent)
            .chain(serial.into_iter().zip(one_by_one));
        for (i, record) in finished {
            slots[i] = Some(record);
        }
        slots.into_iter().flatten().collect()
    }

    /// Whether the tool is offered and may destroy data (marked destructive, or imported
    /// without saying it is not).
    fn is_destructive(&self, name: &str) -> bool {
        self.offered.contains(name)
            && self
                .executor
                .and_then(|exec| exec.spec(name))
                .is_some_and(|spec| spec.metadata.may_destroy())
    }

    async fn one(
        &self,
        index: usize,
        call: &ToolCall,
        verdict: Verdict,
        answers: &[Answered],
    ) -> CallRecord {
        let started = Instant::now();
        let mut repaired = None;
        let result = match verdict {
            Verdict::Run => match self.retries.refusal(&call.name, self.max_retries(call)) {
                Some(refusal) => Ok(ToolOutput::error(refusal)),
                None => {
                    // The call's own options: its questions answered from the answers given
                    // before, the first without one stopping this call alone.
                    let stop = match &self.options.cancellation {
                        Some(run) => run.child_token(),
                        None => tool_runtime::CancellationToken::new(),
                    };
                    let replay = ReplayedQuestions::new(answers.to_vec(), stop.clone());
                    let mut options = self.options.clone().with_elicitor(replay.elicitor());
                    options.cancellation = Some(stop);
                    let span = telemetry::tool_span(call, self.trace_content);
                    let (result, mended) = (self.hooked(call, &options, &replay))
                        .instrument(span.clone())
                        .await;
                    telemetry::tool_ended(&span, &result, self.trace_content);
                    repaired = mended;
                    match replay.take_waiting() {
                        // Not a failure: the call waits for the answer.
                        Some((number, question)) => {
                            // The answers before the question it stopped at: one given to
                            // another question there is not kept (it would stop it again).
                            let answered = replay.answers().iter().take(number).cloned().collect();
                            self.questions
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .push((index, Asked { question, answered }));
                        }
                        None => self.retries.record(&call.name, &result),
                    }
                    result
                }
            },
            Verdict::Warn { times } => Ok(ToolOutput::error(format!(
                "You called `{}` with these arguments {times} times in a row; it was not run \
                 again, and the result would not change. Use the results you have, or change \
                 the arguments. One more identical call ends the conversation.",
                call.name
            ))),
            Verdict::Stop { times } => Ok(ToolOutput::error(format!(
                "Not run: `{}` was called with the same arguments {times} times in a row, so \
                 the run was stopped.",
                call.name
            ))),
            Verdict::Skip => Ok(ToolOutput::error(
                "Not run: another call of the same answer repeated itself, so the run was stopped.",
            )),
            Verdict::OverLimit { limit } => Ok(ToolOutput::error(format!(
                "Not run: this conversation's limit of {limit} tool calls is reached. Answer \
                 with the results you have."
            ))),
        };
        CallRecord {
            call: call.clone(),
            result,
            elapsed: started.elapsed(),
            repaired,
        }
    }

    /// The calls that stopped at a question without an answer, by position in the calls
    /// run, in that order.
    pub(crate) fn take_questions(&self) -> Vec<(usize, Asked)> {
        let mut questions = std::mem::take(
            &mut *self
                .questions
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        questions.sort_by_key(|(index, _)| *index);
        questions
    }

    /// Why a hook ended the run, if one did.
    pub(crate) fn take_terminated(&self) -> Option<String> {
        self.terminated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn terminate(&self, reason: String) {
        let mut terminated = self
            .terminated
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        terminated.get_or_insert(reason);
    }

    /// The retry budget of the tool called.
    fn max_retries(&self, call: &ToolCall) -> usize {
        self.executor
            .and_then(|exec| exec.spec(&call.name))
            .and_then(|spec| spec.metadata.max_retries)
            .unwrap_or(self.max_retries)
    }

    /// The call's arguments mended, when they are JSON text that does not parse and the
    /// loop's repair makes an object of them.
    fn mended_json(&self, call: &ToolCall) -> Option<Repaired> {
        let serde_json::Value::String(text) = &call.arguments else {
            return None;
        };
        if !self.repair_json {
            return None;
        }
        let (arguments, fixes) = tool_core::repair::repair_json(text)?;
        if !arguments.is_object() {
            return None;
        }
        let mends: Vec<String> = fixes.iter().map(ToString::to_string).collect();
        tracing::info!(tool = %call.name, mends = %mends.join(", "), "a tool call's JSON was mended");
        Some(Repaired {
            arguments,
            by: RepairedBy::Json(fixes),
        })
    }

    /// Runs a call with `options`: its JSON mended first, between the hooks when there are
    /// hooks and the tool was offered, and once more with the arguments a repair hook gives.
    /// Returns the result and the arguments mended, if they were. A call stopped at a question
    /// (`replay` waits) returns at once: nothing was done, for a hook to see.
    async fn hooked(
        &self,
        made: &ToolCall,
        options: &CallOptions,
        replay: &ReplayedQuestions,
    ) -> (Result<ToolOutput, ToolError>, Option<Repaired>) {
        let mut repaired = self.mended_json(made);
        let mended;
        let call = match &repaired {
            Some(repair) => {
                mended = ToolCall {
                    arguments: repair.arguments.clone(),
                    ..made.clone()
                };
                &mended
            }
            None => made,
        };
        let hooks = self.hooks.filter(|_| self.offered.contains(&call.name));
        let before = hooks.map_or(BeforeTool::Run, |hooks| hooks.before_tool(call));
        let rewritten;
        let call = match before {
            BeforeTool::Run => call,
            BeforeTool::Rewrite(arguments) => {
                rewritten = ToolCall {
                    arguments,
                    ..call.clone()
                };
                &rewritten
            }
            BeforeTool::Skip(output) => return (Ok(output), repaired),
            BeforeTool::Deny(reason) => return (Ok(ToolOutput::error(reason)), repaired),
            BeforeTool::Terminate(reason) => {
                let text = format!("Not run: {reason}");
                self.terminate(reason);
                return (Ok(ToolOutput::error(text)), repaired);
            }
        };
        let mut result = self.execute(call, options).await;
        if replay.is_waiting() {
            return (result, repaired);
        }
        if let (Some(hooks), Err(error @ ToolError::InvalidArguments { .. })) = (hooks, &result) {
            match hooks.repair_call(call, error) {
                RepairCall::AskModel => {}
                RepairCall::Skip(output) => result = Ok(output),
                RepairCall::Fixed(arguments) => {
                    let fixed = ToolCall {
                        arguments: arguments.clone(),
                        ..call.clone()
                    };
                    result = self.execute(&fixed, options).await;
                    if replay.is_waiting() {
                        return (result, repaired);
                    }
                    repaired = Some(Repaired {
                        arguments,
                        by: RepairedBy::Hook,
                    });
                }
            }
        }
        if let Some(hooks) = hooks {
            if let AfterTool::Terminate(reason) = hooks.after_tool(call, &mut result) {
                self.terminate(reason);
            }
        }
        (result, repaired)
    }

    /// Runs an offered tool (the run's own `read_result` among them); refuses any other.
    async fn execute(
        &self,
        call: &ToolCall,
        options: &CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        if call.name == READ_RESULT && self.offered.contains(READ_RESULT) {
            if let Some((kept, max_length)) = self.kept {
                return kept.read(&call.arguments, max_length);
            }
        }
        let searches =
            |spec: &tool_core::ToolSpec| spec.name == TOOL_SEARCH && spec.metadata.searches_tools;
        if let Some(search) = self.search {
            if call.name == TOOL_SEARCH && self.offered.specs().iter().any(searches) {
                return search.answer(call, self.offered).await;
            }
        }
        match self.executor {
            Some(exec) if self.offered.contains(&call.name) && self.allows(&call.name) => {
                exec.execute_call(call, options).await
            }
            Some(_) if self.offered.contains(&call.name) => {
                let allowed = self.allowed.unwrap_or_default();
                Err(ToolError::NotOffered {
                    name: call.name.clone(),
                    suggestions: tool_core::suggest::closest_names(
                        &call.name,
                        allowed.iter().map(String::as_str),
                        3,
                    ),
                })
            }
            executor => {
                let exists = executor.is_some_and(|exec| exec.spec(&call.name).is_some());
                Err(self.offered.refusal(&call.name, exists))
            }
        }
    }

    /// Whether the request's tool choice lets the model call `name`.
    fn allows(&self, name: &str) -> bool {
        self.allowed
            .is_none_or(|allowed| allowed.iter().any(|n| n == name))
    }
}
