//! The loop: request, run the calls, send the results, until an answer or a stop condition.
//! Resuming an interrupted run is in `resume`.

mod decide;
mod output;
mod result_cap;
mod resume;

use std::sync::Arc;
use std::time::Instant;

use futures_util::stream::{self, Stream, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tool_core::ToolCall;
use tool_runtime::CallOptions;
use tracing::Instrument;

use crate::agent::Agent;
use crate::approval::{Interruption, PendingApproval, RunState, StepHead};
use crate::calls::{Asked, Calls};
use crate::events::RunEvent;
use crate::hooks::StepPlan;
use crate::kept::{KeptResults, READ_RESULT};
use crate::options::RunOptions;
use crate::repeat::{RepeatGuard, Verdict};
use crate::result::{CallRecord, RunError, RunFailure, RunResult, Step, StopReason};
use crate::retries::Retries;
use crate::scope::InvocationScope;
use crate::telemetry;
use decide::{decide, Answer, Standing, StepDecision};
use output::OutputCheck;
use tool_model::message::{Message, Usage};
use tool_model::ModelEvent;
use tool_model::OfferedTools;
use tool_model::{AllowedMode, Ending, ModelError, ModelRequest, ModelResponse, ToolChoice};

impl Agent {
    /// Runs the model on `input` until it answers without calling tools or a stop condition
    /// of `options` is met.
    ///
    /// Tool errors (invalid arguments, unknown or not offered tools, failures, panics, time
    /// limits) go back to the model as results; they end the run only after
    /// [`RunOptions::max_failed_steps`] steps in a row of nothing else. A run that ends without
    /// an answer is a [`RunError`], which keeps the partial transcript, steps and usage. A run
    /// whose model calls a tool that needs approval stops with [`StopReason::Interrupted`] and
    /// [`RunResult::interruption`]; [`Agent::resume`] goes on.
    pub async fn run(
        &self,
        input: impl Into<String>,
        options: &RunOptions,
    ) -> Result<RunResult, RunError> {
        self.run_with_events(input.into(), options, None).await
    }

    /// [`Agent::run`], yielding what happens as it happens: the model's text as it comes, each
    /// call as it starts, each result, each step, and last [`RunEvent::Finished`] with what
    /// `run` would have returned. The model streams through
    /// [`ChatModel::respond_stream`](crate::ChatModel::respond_stream).
    ///
    /// The stream is not `Unpin`: pin it (`std::pin::pin!`) to poll it.
    pub fn run_stream<'a>(
        &'a self,
        input: impl Into<String>,
        options: &'a RunOptions,
    ) -> impl Stream<Item = RunEvent> + Send + 'a {
        let input = input.into();
        event_stream(move |events| self.run_with_events(input, options, Some(events)))
    }

    async fn run_with_events(
        &self,
        input: String,
        options: &RunOptions,
        events: Option<Events>,
    ) -> Result<RunResult, RunError> {
        let mut transcript = options.history.clone();
        transcript.push(Message::user(input.as_str()));
        let offered = match self.offered_tools(&input, options).await {
            Ok(offered) => offered,
            Err(failure) => return Err(early_failure(failure, transcript)),
        };
        let mut run = Run::new(self, options, transcript, offered);
        run.events = events;
        run.start().await
    }

    fn run_span(&self) -> tracing::Span {
        tracing::info_span!(
            "gen_ai.run",
            otel.name = "invoke_agent",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.provider.name = telemetry::provider_name(self.model.format()),
            gen_ai.request.model = self.model.model_name(),
        )
    }
}

/// The events a run sends as it goes, then [`RunEvent::Finished`] with its result.
pub(super) fn event_stream<'a, F>(
    run: impl FnOnce(Events) -> F + Send + 'a,
) -> impl Stream<Item = RunEvent> + Send + 'a
where
    F: std::future::Future<Output = Result<RunResult, RunError>> + Send + 'a,
{
    let (sender, receiver) = mpsc::unbounded_channel();
    let run = async move {
        let result = run(sender.clone()).await;
        let _ = sender.send(RunEvent::Finished(Box::new(result)));
    };
    let events = stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|event| (event, receiver))
    });
    // The run only sends; its own stream yields nothing and ends when the run does.
    let driver = stream::once(run).filter_map(|()| async { None });
    stream::select(events, driver)
}

/// A run that failed before its first request.
fn early_failure(failure: RunFailure, transcript: Vec<Message>) -> RunError {
    RunError {
        failure,
        partial: Box::new(RunResult {
            transcript,
            ..RunResult::default()
        }),
    }
}

/// Where a streamed run's events go.
type Events = mpsc::UnboundedSender<RunEvent>;

/// One run in progress.
struct Run<'a> {
    /// The check of the final answer, when the run asked for a schema; an error when the
    /// schema cannot check anything (the run then fails before its first request).
    output_check: Result<Option<OutputCheck>, String>,
    /// How many more times the model may answer again after an answer the check refused.
    output_retries: usize,
    /// The final answer as the check read it.
    output: Option<Value>,
    /// Where events go, when the run is streamed.
    events: Option<Events>,
    agent: &'a Agent,
    options: &'a RunOptions,
    /// What the calls of the run share.
    scope: InvocationScope,
    /// The tools the run offers; a hook may narrow them for one request.
    offered: Arc<OfferedTools>,
    /// The next request: its messages are the transcript so far.
    request: ModelRequest,
    steps: Vec<Step>,
    /// Steps before this part of the run (an interrupted run's, when resuming).
    first_step: usize,
    usage: Usage,
    repeats: RepeatGuard,
    /// Steps in a row whose calls all failed.
    failed_steps: usize,
    /// Tool calls made (or waiting for approval), against `RunOptions::max_tool_calls`.
    tool_calls: usize,
    /// Tools approved for the rest of the run.
    approved_tools: Vec<String>,
    /// Results cut for the model and kept whole, when the run offers `read_result`.
    kept: Option<KeptResults>,
    /// Each tool's failed attempts in a row.
    retries: Retries,
    /// The offered tools the current step may call, when not all of them: the run's gates and
    /// a hook's narrowing, enforced whatever the tool choice sent says.
    step_callable: Option<Vec<String>>,
}

/// How a step ended the run, if it did.
enum Outcome {
    Continue,
    Done(StopReason, String),
    Failed(RunFailure),
    Interrupted(Interrupted),
}

/// A step stopped with calls waiting: the results of those that ran, the calls that wait, and
/// a hook's termination of it, all by position in the model's answer.
struct Interrupted {
    done: Vec<(usize, Message)>,
    /// Positions among `done` of calls a person rejected (not the model's failures).
    rejected: Vec<usize>,
    pending: Vec<(usize, PendingApproval)>,
    terminated: Option<String>,
    head: Option<StepHead>,
}

impl<'a> Run<'a> {
    fn new(
        agent: &'a Agent,
        options: &'a RunOptions,
        messages: Vec<Message>,
        offered: OfferedTools,
    ) -> Self {
        let keeps = options.kept_result_bytes > 0
            && offered.contains(READ_RESULT)
            && agent
                .executor_for(options)
                .is_some_and(|exec| exec.spec(READ_RESULT).is_none());
        let offered = Arc::new(offered);
        Run {
            kept: keeps.then(|| KeptResults::new(options.kept_result_bytes)),
            retries: Retries::default(),
            step_callable: None,
            output_check: options.output.as_ref().map(OutputCheck::new).transpose(),
            output_retries: options.output_retries,
            output: None,
            events: None,
            agent,
            options,
            scope: InvocationScope::new(options.context.clone()),
            offered: Arc::clone(&offered),
            request: {
                let mut request = ModelRequest::new(messages);
                request.instructions = agent.instructions.clone();
                request.tools = offered;
                request.response_format = options.output.clone();
                request.parallel_tool_calls = options.parallel_tool_calls;
                request
            },
            steps: Vec::new(),
            first_step: 0,
            usage: Usage::default(),
            repeats: RepeatGuard::default(),
            failed_steps: 0,
            tool_calls: 0,
            approved_tools: Vec::new(),
        }
    }

    /// The whole run, inside its scope and span.
    async fn start(self) -> Result<RunResult, RunError> {
        let span = self.agent.run_span();
        let scope = self.scope.clone();
        scope.enter(self.go()).instrument(span).await
    }

    /// The number of the next step, counting those before an interruption.
    fn step_number(&self) -> usize {
        self.first_step.saturating_add(self.steps.len())
    }

    async fn go(mut self) -> Result<RunResult, RunError> {
        if let Err(problem) = &self.output_check {
            let failure = RunFailure::Output(problem.clone());
            return self.fail(failure);
        }
        // The text of a turn the API paused, until the turn ends: the answer's text is all of
        // it, as the parts of one answer are.
        let mut paused = String::new();
        loop {
            let index = self.step_number();
            let limit = self.limit_reached(index);
            let at_limit = limit.is_some();
            if let (Some(reason), false) = (&limit, self.options.answer_at_limit) {
                let text = match paused.is_empty() {
                    true => self.last_text(),
                    false => paused,
                };
                return self.done(reason.clone(), text);
            }
            self.request.tool_choice = self.tool_choice(index, at_limit);
            self.plan_step(index);
            if at_limit {
                // The last request asks for an answer: no hook turns the tools back on.
                self.request.tool_choice = ToolChoice::None;
            }
            if self.is_cancelled() {
                return self.fail(RunFailure::Cancelled);
            }
            let started = Instant::now();
            let response = match self.ask(index).await {
                Ok(response) => response,
                Err(failure) => return self.fail(failure),
            };
            let model_time = started.elapsed();
            let mut usage = response.usage;
            usage.requests = 1;
            self.usage += usage;
            self.emit(RunEvent::Usage { step: index, usage });
            let cap = self.options.max_calls_per_answer;
            if response.calls.len() > cap {
                let message = format!(
                    "the answer has {} tool calls, more than the {cap} one answer may make \
                     (RunOptions::max_calls_per_answer): none was run",
                    response.calls.len()
                );
                return self.fail(RunFailure::Model {
                    step: index,
                    error: ModelError::Malformed {
                        provider: "the model",
                        message,
                    },
                });
            }
            // Calls made in a request with tools turned off are not run, and not kept: a call
            // without a result would make the transcript invalid for the API. Calls made when
            // no tool was offered are refused like any call of a tool not offered. Nor are
            // the calls of an answer cut at the output limit or stopped by a filter: their
            // arguments may be cut too, and the run ends as that answer does.
            let cut = matches!(response.ending, Ending::CutAtLimit | Ending::Declined);
            if cut && !response.calls.is_empty() {
                tracing::warn!(
                    calls = response.calls.len(),
                    reason = response.finish_reason.as_deref().unwrap_or_default(),
                    "the answer was cut short with tool calls in it: they are not run"
                );
            }
            let calls = if self.request.tool_choice != ToolChoice::None && !cut {
                response.calls
            } else {
                Vec::new()
            };
            // What the model thought goes back with its answer, to the API that gave it.
            if let Some(reasoning) = response.reasoning {
                self.request.messages.push(Message::Reasoning(reasoning));
            }
            self.request.messages.push(Message::Assistant {
                text: response.text.clone(),
                calls: calls.clone(),
            });
            let step = Step {
                index,
                tool_choice: self.request.tool_choice.clone(),
                text: response.text,
                calls: Vec::new(),
                usage,
                model_time,
                tools_time: Default::default(),
                finish_reason: response.finish_reason,
                ending: response.ending,
            };
            // A paused turn that goes on with calls of the run's tools: its text is a step's,
            // as any text beside calls.
            let has_calls = !calls.is_empty();
            match has_calls {
                true => paused.clear(),
                false => paused.push_str(step.text.as_deref().unwrap_or_default()),
            }
            let text = match step.ending {
                Ending::Paused => paused.clone(),
                _ => std::mem::take(&mut paused),
            };
            let reason = step.finish_reason.clone().unwrap_or_default();
            let answer = Answer {
                ending: step.ending,
                has_calls,
                text: &text,
                reason: &reason,
            };
            let standing = self.standing(index, limit);
            let decision = decide(
                answer,
                &standing,
                || self.stop_after(&step),
                |text| match &self.output_check {
                    Ok(Some(check)) => Some(check.check(text)),
                    _ => None,
                },
            );
            let outcome = match decision {
                StepDecision::RunCalls => self.act(step, &calls).await,
                decision => {
                    self.push_step(step);
                    match decision {
                        StepDecision::End(stop, output) => {
                            if output.is_some() {
                                self.output = output;
                            }
                            Outcome::Done(stop, text)
                        }
                        StepDecision::Fail(failure) => Outcome::Failed(failure),
                        StepDecision::AskAgain => {
                            self.failed_steps = self.failed_steps.saturating_add(1);
                            self.ask_again(&reason);
                            Outcome::Continue
                        }
                        StepDecision::Retell(told) => {
                            self.retell(index, &text, told);
                            Outcome::Continue
                        }
                        StepDecision::GoOn | StepDecision::RunCalls => Outcome::Continue,
                    }
                }
            };
            match outcome {
                Outcome::Continue => {}
                Outcome::Done(reason, text) => return self.done(reason, text),
                Outcome::Failed(failure) => return self.fail(failure),
                Outcome::Interrupted(stopped) => return self.interrupt(stopped),
            }
        }
    }

    /// Runs a step's calls, except those waiting for approval, and judges the step.
    async fn act(&mut self, mut step: Step, calls: &[ToolCall]) -> Outcome {
        let limit = self.options.repeat_limit;
        let mut verdicts: Vec<Verdict> = calls
            .iter()
            .map(|call| self.repeats.check(call, limit))
            .collect();
        let repeated = calls
            .iter()
            .zip(&verdicts)
            .find_map(|(call, verdict)| match verdict {
                Verdict::Stop { times } => Some((call.name.clone(), *times)),
                _ => None,
            });
        if repeated.is_some() {
            for verdict in &mut verdicts {
                if !matches!(verdict, Verdict::Stop { .. }) {
                    *verdict = Verdict::Skip;
                }
            }
        }
        self.count_calls(&mut verdicts);
        // Each call that waits, with whether it waits for its result from outside.
        let external: Vec<Option<bool>> = (0..calls.len())
            .map(|i| {
                (verdicts[i] == Verdict::Run)
                    .then(|| self.waits(&calls[i]))
                    .flatten()
            })
            .collect();
        let waiting: Vec<usize> = (0..calls.len())
            .filter(|&i| external[i].is_some())
            .collect();
        // The calls that run now, by position in the answer; those that wait are announced
        // when they are decided and run.
        let ready: Vec<usize> = (0..calls.len()).filter(|i| !waiting.contains(i)).collect();
        let (ready_calls, ready_verdicts): (Vec<ToolCall>, Vec<Verdict>) = (ready.iter())
            .map(|&i| (calls[i].clone(), verdicts[i]))
            .unzip();
        self.announce(step.index, &ready_calls);
        let started = Instant::now();
        let runner = self.calls();
        let ran = runner.run(&ready_calls, &ready_verdicts, &[]).await;
        step.tools_time = started.elapsed();
        let terminated = runner.take_terminated();
        // Calls that stopped at a question wait for its answer.
        let asked: Vec<(usize, Asked)> = (runner.take_questions().into_iter())
            .map(|(i, asked)| (ready[i], asked))
            .collect();
        if waiting.is_empty() && asked.is_empty() {
            for record in &ran {
                let message = self.result_message(record);
                self.request.messages.push(message);
            }
            step.calls = ran;
            let outcome = self.judge(&step, repeated, terminated, &[]);
            self.push_step(step);
            return outcome;
        }
        let asks = |i: &usize| asked.iter().any(|(a, _)| a == i);
        let ran: Vec<(usize, CallRecord)> = (ready.iter().copied().zip(ran))
            .filter(|(i, _)| !asks(i))
            .collect();
        let done: Vec<(usize, Message)> = (ran.iter())
            .map(|(i, record)| (*i, self.result_message(record)))
            .collect();
        if self.is_cancelled() {
            let mut unanswered = waiting;
            unanswered.extend(asked.iter().map(|(i, _)| *i));
            unanswered.sort_unstable();
            step.calls = self.close_cancelled(step.index, done, ran, &unanswered, calls);
            self.push_step(step);
            return Outcome::Failed(RunFailure::Cancelled);
        }
        // A hook's termination is kept: the step is judged whole when it is resumed.
        let head = StepHead {
            tool_choice: step.tool_choice.clone(),
            usage: step.usage,
            finish_reason: step.finish_reason.clone(),
            model_ms: u64::try_from(step.model_time.as_millis()).unwrap_or(u64::MAX),
            tools_ms: u64::try_from(step.tools_time.as_millis()).unwrap_or(u64::MAX),
        };
        step.calls = ran.into_iter().map(|(_, record)| record).collect();
        self.push_step(step);
        let mut pending: Vec<(usize, PendingApproval)> = waiting
            .into_iter()
            .map(|i| {
                let external = external[i].unwrap_or(false);
                (i, PendingApproval::new(calls[i].clone(), external))
            })
            .chain(asked.into_iter().map(|(i, asked)| {
                let call = calls[i].clone();
                (
                    i,
                    PendingApproval::asking(call, asked.question, asked.answered),
                )
            }))
            .collect();
        pending.sort_by_key(|(i, _)| *i);
        Outcome::Interrupted(Interrupted {
            done,
            rejected: Vec::new(),
            pending,
            terminated,
            head: Some(head),
        })
    }

    /// Ends the transcript of a step cancelled while calls waited: the results of those that
    /// ran, and each waiting call cancelled, in call order, so that every call has its result.
    /// Returns the step's records, in the same order.
    fn close_cancelled(
        &mut self,
        step: usize,
        done: Vec<(usize, Message)>,
        ran: Vec<(usize, CallRecord)>,
        waiting: &[usize],
        calls: &[ToolCall],
    ) -> Vec<CallRecord> {
        let mut results = done;
        let mut records = ran;
        // Not announced while they waited: they are now, with their results.
        let cancelled: Vec<ToolCall> = waiting.iter().map(|&i| calls[i].clone()).collect();
        self.announce(step, &cancelled);
        for &i in waiting {
            let record = CallRecord {
                call: calls[i].clone(),
                result: Err(tool_core::ToolError::Cancelled {
                    tool: calls[i].name.clone(),
                }),
                elapsed: Default::default(),
                repaired: None,
            };
            results.push((i, self.result_message(&record)));
            records.push((i, record));
        }
        results.sort_by_key(|(i, _)| *i);
        records.sort_by_key(|(i, _)| *i);
        let messages = results.into_iter().map(|(_, message)| message);
        self.request.messages.extend(messages);
        records.into_iter().map(|(_, record)| record).collect()
    }

    /// Where the run stands when the answer of step `index` comes, having reached `limit`.
    fn standing(&self, index: usize, limit: Option<StopReason>) -> Standing {
        Standing {
            index,
            limit,
            tools_on: self.request.tool_choice != ToolChoice::None,
            max_steps: self.options.max_steps,
            answer_at_limit: self.options.answer_at_limit,
            failed_steps: self.failed_steps,
            max_failed_steps: self.options.max_failed_steps,
            output_retries: self.output_retries,
        }
    }

    /// Tells the model what is wrong with its answer of step `index` against the run's output
    /// schema, for it to answer again.
    fn retell(&mut self, index: usize, text: &str, told: String) {
        self.output_retries = self.output_retries.saturating_sub(1);
        self.emit(RunEvent::OutputRejected {
            step: index,
            told: told.clone(),
        });
        // An empty answer is left out: APIs refuse an empty message before the last.
        if text.trim().is_empty() {
            self.request.messages.pop();
            if let Some(Message::Reasoning(_)) = self.request.messages.last() {
                self.request.messages.pop();
            }
        }
        self.request.messages.push(Message::user(told));
    }

    /// Tells the model its call could not be read, for it to call again.
    fn ask_again(&mut self, reason: &str) {
        // An empty answer is left out: APIs refuse an empty message before the last.
        if self
            .request
            .messages
            .last()
            .is_some_and(Message::is_empty_answer)
        {
            self.request.messages.pop();
            if let Some(Message::Reasoning(_)) = self.request.messages.last() {
                self.request.messages.pop();
            }
        }
        let told = format!(
            "Your tool call could not be read ({reason}). Call the tool again, with arguments \
             that are valid JSON for its schema, or answer without it."
        );
        self.request.messages.push(Message::user(told));
    }

    /// Lets the hooks change the next request's tool choice and narrow its tools, then
    /// restricts the calls to what the step may call. Where the API restricts calls without
    /// changing the declarations, a narrowing is sent as an allowed-tools choice and the tools
    /// stay the run's; elsewhere the request declares the narrowed tools alone.
    fn plan_step(&mut self, index: usize) {
        let mut plan = StepPlan {
            index,
            tool_choice: self.request.tool_choice.clone(),
            tools: None,
        };
        if let Some(hooks) = &self.agent.hooks {
            hooks.prepare_step(&mut plan);
        }
        let in_place = self
            .agent
            .model
            .format()
            .is_some_and(ToolChoice::keeps_declarations_in);
        let narrowed = match plan.tools {
            Some(names) if !in_place => {
                self.request.tools = Arc::new(self.agent.narrowed(&self.offered, &names));
                None
            }
            names => {
                self.request.tools = Arc::clone(&self.offered);
                names
            }
        };
        let callable: Option<Vec<String>> = match (self.request.tools.callable(), narrowed) {
            (None, None) => None,
            (Some(callable), None) => Some(callable.to_vec()),
            (None, Some(names)) => Some(
                names
                    .into_iter()
                    .filter(|n| self.request.tools.contains(n))
                    .collect(),
            ),
            (Some(callable), Some(names)) => {
                Some(names.into_iter().filter(|n| callable.contains(n)).collect())
            }
        };
        self.request.tool_choice = match &callable {
            Some(names) if in_place => plan.tool_choice.within(names),
            _ => plan.tool_choice,
        };
        self.step_callable = callable;
    }

    /// The limit the run has reached before step `index`, if any: its steps, or its tool calls.
    fn limit_reached(&self, index: usize) -> Option<StopReason> {
        if index >= self.options.max_steps {
            let steps = self.options.max_steps;
            return Some(StopReason::MaxSteps { steps });
        }
        self.options
            .max_tool_calls
            .filter(|&calls| self.tool_calls >= calls)
            .map(|calls| StopReason::ToolCallLimit { calls })
    }

    /// Counts the calls about to run against the run's limit of tool calls; those over it are
    /// not run.
    fn count_calls(&mut self, verdicts: &mut [Verdict]) {
        for verdict in verdicts.iter_mut().filter(|v| **v == Verdict::Run) {
            match self.options.max_tool_calls {
                Some(limit) if self.tool_calls >= limit => *verdict = Verdict::OverLimit { limit },
                _ => self.tool_calls = self.tool_calls.saturating_add(1),
            }
        }
    }

    /// Whether the call waits, and for what: `Some(true)` for its result from outside (an
    /// offered tool the executor only declares, with arguments its schema admits: other
    /// arguments fail as any call's would), `Some(false)` for a person's decision (a tool marked
    /// `requires_approval` or named by the agent's policy, unless approved for the run; or a
    /// call the policy on arguments names, asked every time).
    fn waits(&self, call: &ToolCall) -> Option<bool> {
        if !self.callable(&call.name) {
            return None;
        }
        let exec = self.agent.executor_for(self.options)?;
        let spec = exec.spec(&call.name)?;
        // Arguments a model sent as JSON text are read as the executor reads them.
        let read = read_arguments(call);
        let call = read.as_ref().unwrap_or(call);
        if !exec.is_executable(&call.name) {
            let answered =
                self.agent.external && exec.validate(&call.name, &call.arguments).is_ok();
            return answered.then_some(true);
        }
        let policy = self.agent.approval.as_deref();
        let tool_waits = !self.approved_tools.contains(&call.name)
            && (spec.metadata.requires_approval || policy.is_some_and(|p| p(spec)));
        let call_policy = self.agent.call_approval.as_deref();
        let call_waits = call_policy.is_some_and(|p| p(spec, call, &self.options.context));
        (tool_waits || call_waits).then_some(false)
    }

    /// Whether the current step may call the tool: offered, allowed by the tool choice, and
    /// not restricted away.
    fn callable(&self, name: &str) -> bool {
        self.request.tools.contains(name)
            && self.request.tool_choice.allows(name)
            && self
                .step_callable
                .as_ref()
                .is_none_or(|callable| callable.iter().any(|n| n == name))
    }

    /// What runs the calls of this run.
    fn calls(&self) -> Calls<'_> {
        let mut options = CallOptions::default().with_extension(self.scope.clone());
        if self.agent.answers_sampling {
            let model = Arc::clone(&self.agent.model);
            options =
                options.with_sampler(crate::sampling::sampler(model, self.agent.sampling_cap));
        }
        options.cancellation = self.options.cancellation.clone();
        Calls {
            executor: self.agent.executor_for(self.options),
            offered: &self.request.tools,
            allowed: match &self.request.tool_choice {
                ToolChoice::Allowed(names, _) => Some(names.as_slice()),
                _ => self.step_callable.as_deref(),
            },
            options,
            concurrency: self.options.max_concurrency,
            hooks: self.agent.hooks.as_deref(),
            terminated: Default::default(),
            kept: self
                .kept
                .as_ref()
                .map(|kept| (kept, self.options.max_result_bytes)),
            retries: &self.retries,
            max_retries: self.options.max_retries,
            repair_json: self.options.repair_json,
            trace_content: self.agent.trace_content,
            search: self.agent.tool_search.as_ref(),
            questions: Default::default(),
        }
    }

    /// The tool choice of step `index`: the options' for the first request, `Auto` after it
    /// (unless tools were turned off), `None` for the last answer at the step limit.
    fn tool_choice(&self, index: usize, at_limit: bool) -> ToolChoice {
        match &self.options.tool_choice {
            _ if at_limit => ToolChoice::None,
            choice if index == 0 => choice.clone(),
            ToolChoice::None => ToolChoice::None,
            // A restriction holds for the whole run; a call it forced, for the first step.
            ToolChoice::Allowed(names, _) => ToolChoice::Allowed(names.clone(), AllowedMode::Auto),
            _ => ToolChoice::Auto,
        }
    }

    fn emit(&self, event: RunEvent) {
        if let Some(events) = &self.events {
            // A receiver that went away stops listening; the run goes on.
            let _ = events.send(event);
        }
    }

    /// Records a step, and tells its results and its end.
    fn push_step(&mut self, step: Step) {
        self.push_step_except(step, &[]);
    }

    /// [`Run::push_step`], but for the results at positions `told` of its calls, which were
    /// given as events before (a step finished on resume).
    fn push_step_except(&mut self, step: Step, told: &[usize]) {
        if self.events.is_some() {
            let new = (step.calls.iter().enumerate()).filter(|(i, _)| !told.contains(i));
            for (_, record) in new {
                self.emit(RunEvent::ToolResult {
                    step: step.index,
                    record: record.clone(),
                });
            }
            self.emit(RunEvent::StepFinished(Box::new(step.clone())));
        }
        self.steps.push(step);
    }

    /// Tells the calls about to run.
    fn announce(&self, step: usize, calls: &[ToolCall]) {
        if self.events.is_some() {
            for call in calls {
                self.emit(RunEvent::ToolCallStarted {
                    step,
                    call: call.clone(),
                });
            }
        }
    }

    /// The model's answer: streamed when the run is, its deltas passed on.
    async fn receive(&self, index: usize) -> Result<ModelResponse, ModelError> {
        if self.events.is_none() {
            return self.agent.model.respond(&self.request).await;
        }
        let mut answer = self.agent.model.respond_stream(&self.request);
        let step = index;
        while let Some(event) = answer.next().await {
            match event? {
                ModelEvent::TextDelta(text) => self.emit(RunEvent::TextDelta { step, text }),
                ModelEvent::ToolCallDelta(delta) => {
                    self.emit(RunEvent::ToolCallDelta { step, delta })
                }
                ModelEvent::ReasoningDelta(text) => {
                    self.emit(RunEvent::ReasoningDelta { step, text })
                }
                ModelEvent::Done(response) => return Ok(response),
                // What a client may stream besides.
                _ => {}
            }
        }
        Err(ModelError::Malformed {
            provider: "the model",
            message: "the stream ended before the answer was complete".into(),
        })
    }

    /// Sends the request, ending it when the run is cancelled.
    async fn ask(&self, index: usize) -> Result<ModelResponse, RunFailure> {
        let model = &*self.agent.model;
        let span = telemetry::chat_span(model);
        let started = std::time::Instant::now();
        let respond = self.receive(index);
        let answer: Result<ModelResponse, ModelError> = match &self.options.cancellation {
            Some(token) => tokio::select! {
                answer = respond.instrument(span.clone()) => answer,
                () = token.cancelled() => return Err(RunFailure::Cancelled),
            },
            None => respond.instrument(span.clone()).await,
        };
        let outcome = answer.as_ref().map(|response| &response.usage);
        telemetry::chat_ended(&span, model, started.elapsed(), outcome);
        answer.map_err(|error| RunFailure::Model { step: index, error })
    }

    /// Whether the step that ran calls ends the run. The calls at positions `rejected` were
    /// refused by a person: they do not count for or against the model's failures.
    fn judge(
        &mut self,
        step: &Step,
        repeated: Option<(String, usize)>,
        terminated: Option<String>,
        rejected: &[usize],
    ) -> Outcome {
        if self.is_cancelled() {
            return Outcome::Failed(RunFailure::Cancelled);
        }
        if let Some((name, times)) = repeated {
            return Outcome::Failed(RunFailure::RepeatedCall { name, times });
        }
        if let Some(reason) = terminated {
            let text = step.text.clone().unwrap_or_default();
            return Outcome::Done(StopReason::Terminated { reason }, text);
        }
        let mut judged = (step.calls.iter().enumerate())
            .filter(|(i, _)| !rejected.contains(i))
            .map(|(_, record)| record)
            .peekable();
        if judged.peek().is_some() {
            if judged.all(CallRecord::failed) {
                self.failed_steps = self.failed_steps.saturating_add(1);
            } else {
                self.failed_steps = 0;
            }
        }
        let max_failed = self.options.max_failed_steps;
        if max_failed > 0 && self.failed_steps >= max_failed {
            let last = step.calls.last().map(describe).unwrap_or_default();
            return Outcome::Failed(RunFailure::TooManyFailedSteps {
                steps: self.failed_steps,
                last,
            });
        }
        // Only a call that ran and succeeded: a failed one goes back to the model as any other.
        let stopper = step.calls.iter().find(|r| {
            self.options.stop_at_tools.contains(&r.call.name)
                && matches!(&r.result, Ok(output) if !output.is_error)
        });
        if let Some(record) = stopper {
            let text = match &record.result {
                Ok(output) => output.to_text(),
                Err(error) => error.to_model_text(),
            };
            let name = record.call.name.clone();
            return Outcome::Done(StopReason::ToolCalled { name }, text);
        }
        match self.stop_after(step) {
            Some(reason) => Outcome::Done(reason, step.text.clone().unwrap_or_default()),
            None => Outcome::Continue,
        }
    }

    /// Whether the run stops after a step that goes on (its calls ran, or its turn was
    /// paused): its token budget spent, or the `stop_when` predicate.
    fn stop_after(&self, step: &Step) -> Option<StopReason> {
        if let Some(budget) = self.options.token_budget {
            let used = self.usage.total_tokens();
            if used >= budget {
                return Some(StopReason::TokenBudget { used, budget });
            }
        }
        let stop = self.options.stop_when.as_ref();
        stop.is_some_and(|stop| stop(step))
            .then_some(StopReason::Predicate)
    }

    /// The message answering a call, held to the run's cap on what a result may send, or the
    /// tool's own when it is smaller.
    fn result_message(&self, record: &CallRecord) -> Message {
        let tool_max = self
            .agent
            .executor_for(self.options)
            .and_then(|exec| exec.spec(&record.call.name))
            .and_then(|spec| spec.metadata.max_result_bytes);
        let cap = result_cap::cap_for(self.options.max_result_bytes, tool_max);
        result_cap::result_message(record, cap, self.kept.as_ref())
    }

    fn is_cancelled(&self) -> bool {
        self.options
            .cancellation
            .as_ref()
            .is_some_and(|t| t.is_cancelled())
    }

    /// The model's last text in this run, if any.
    fn last_text(&self) -> String {
        self.steps
            .iter()
            .rev()
            .find_map(|s| s.text.clone())
            .unwrap_or_default()
    }

    fn into_result(self, stop: StopReason, text: String) -> RunResult {
        RunResult {
            text,
            transcript: self.request.messages,
            steps: self.steps,
            usage: self.usage,
            stop,
            references: self.scope.references(),
            interruption: None,
            output: self.output,
        }
    }

    fn done(self, stop: StopReason, text: String) -> Result<RunResult, RunError> {
        Ok(self.into_result(stop, text))
    }

    fn fail(self, failure: RunFailure) -> Result<RunResult, RunError> {
        let text = self.last_text();
        let partial = self.into_result(StopReason::Finished, text);
        Err(RunError {
            failure,
            partial: Box::new(partial),
        })
    }

    /// Stops with calls waiting for approval.
    fn interrupt(self, stopped: Interrupted) -> Result<RunResult, RunError> {
        let Interrupted {
            done,
            rejected,
            pending,
            terminated,
            head,
        } = stopped;
        let mut state = RunState {
            messages: self.request.messages.clone(),
            done,
            rejected,
            terminated,
            step: head,
            offered: self.offered.names().map(str::to_owned).collect(),
            approved_tools: self.approved_tools.clone(),
            steps: self.step_number(),
            usage: self.usage,
            failed_steps: self.failed_steps,
            repeats: self.repeats.clone(),
            tool_calls: self.tool_calls,
            pending,
            references: self.scope.references(),
            reference_count: self.scope.reference_count(),
            seal: None,
        };
        if let Some(key) = &self.agent.state_key {
            state.seal = Some(key.seal(&state));
        }
        for pending in state.pending() {
            self.emit(RunEvent::ApprovalNeeded(pending.clone()));
        }
        let text = self.last_text();
        let mut result = self.into_result(StopReason::Interrupted, text);
        result.interruption = Some(Interruption {
            pending: state.pending().cloned().collect(),
            state,
        });
        Ok(result)
    }
}

/// A failed call, for the developer.
fn describe(record: &CallRecord) -> String {
    match &record.result {
        Err(error) => error.to_string(),
        Ok(output) => format!("`{}`: {}", record.call.name, output.to_text()),
    }
}

/// A call whose arguments came as JSON text, with them read: what the executor runs it with.
/// `None` when they are a value already, or text that is not JSON (which fails when run).
pub(super) fn read_arguments(call: &ToolCall) -> Option<ToolCall> {
    let Value::String(text) = &call.arguments else {
        return None;
    };
    let arguments = serde_json::from_str(text).ok()?;
    Some(ToolCall {
        arguments,
        ..call.clone()
    })
}
