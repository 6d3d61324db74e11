//! The loop: request, run the calls, send the results, until an answer or a stop condition.

use std::sync::Arc;
use std::time::Instant;

use tool_core::provider::CallResult;
use tool_runtime::CallOptions;
use tracing::Instrument;

use crate::agent::Agent;
use crate::calls::Calls;
use crate::message::{Message, Usage};
use crate::model::{ModelError, ModelRequest, ModelResponse, ToolChoice};
use crate::options::RunOptions;
use crate::repeat::{RepeatGuard, Verdict};
use crate::scope::InvocationScope;
use crate::result::{CallRecord, RunError, RunFailure, RunResult, Step, StopReason};

impl Agent {
    /// Runs the model on `input` until it answers without calling tools or a stop condition
    /// of `options` is met.
    ///
    /// Tool errors (invalid arguments, unknown or not offered tools, failures, panics, time
    /// limits) go back to the model as results; they end the run only after
    /// [`RunOptions::max_failed_steps`] steps in a row of nothing else. A run that ends without
    /// an answer is a [`RunError`], which keeps the partial transcript, steps and usage.
    pub async fn run(
        &self,
        input: impl Into<String>,
        options: &RunOptions,
    ) -> Result<RunResult, RunError> {
        let input = input.into();
        let span = tracing::info_span!(
            "gen_ai.run",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.request.model = self.model.model_name(),
        );
        async {
            let mut transcript = options.history.clone();
            transcript.push(Message::user(input.as_str()));
            let offered = match self.offered_tools(&input, options).await {
                Ok(offered) => offered,
                Err(failure) => {
                    let partial = RunResult {
                        transcript,
                        ..RunResult::default()
                    };
                    return Err(RunError {
                        failure,
                        partial: Box::new(partial),
                    });
                }
            };
            let scope = InvocationScope::new(options.context.clone());
            let run = Run {
                agent: self,
                scope: scope.clone(),
                options,
                request: ModelRequest {
                    instructions: self.instructions.clone(),
                    messages: transcript,
                    tools: Arc::new(offered),
                    tool_choice: ToolChoice::Auto,
                },
                steps: Vec::new(),
                usage: Usage::default(),
                repeats: RepeatGuard::default(),
                failed_steps: 0,
            };
            scope.enter(run.go()).await
        }
        .instrument(span)
        .await
    }
}

/// One run in progress.
struct Run<'a> {
    agent: &'a Agent,
    /// What the calls of the run share.
    scope: InvocationScope,
    options: &'a RunOptions,
    /// The next request: its messages are the transcript so far.
    request: ModelRequest,
    steps: Vec<Step>,
    usage: Usage,
    repeats: RepeatGuard,
    /// Steps in a row whose calls all failed.
    failed_steps: usize,
}

/// How a step ended the run, if it did.
enum Outcome {
    Continue,
    Done(StopReason, String),
    Failed(RunFailure),
}

impl Run<'_> {
    async fn go(mut self) -> Result<RunResult, RunError> {
        loop {
            let index = self.steps.len();
            let at_limit = index >= self.options.max_steps;
            if at_limit && !self.options.answer_at_limit {
                let text = self.last_text();
                return self.done(
                    StopReason::MaxSteps {
                        steps: self.options.max_steps,
                    },
                    text,
                );
            }
            self.request.tool_choice = self.tool_choice(index, at_limit);
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
            // Calls made in a request without tools are not run, and not kept: a call without
            // a result would make the transcript invalid for the API.
            let calls = if self.request.offers_tools() {
                response.calls
            } else {
                Vec::new()
            };
            self.request.messages.push(Message::Assistant {
                text: response.text.clone(),
                calls: calls.clone(),
            });
            let mut step = Step {
                index,
                tool_choice: self.request.tool_choice.clone(),
                text: response.text,
                calls: Vec::new(),
                usage,
                model_time,
                tools_time: Default::default(),
            };
            if calls.is_empty() {
                let text = step.text.clone().unwrap_or_default();
                self.steps.push(step);
                let reason = if at_limit {
                    StopReason::MaxSteps {
                        steps: self.options.max_steps,
                    }
                } else {
                    StopReason::Finished
                };
                return self.done(reason, text);
            }
            let started = Instant::now();
            let (records, repeated) = self.run_calls(&calls).await;
            step.tools_time = started.elapsed();
            for record in &records {
                self.request.messages.push(Message::tool_result(&CallResult {
                    call: record.call.clone(),
                    result: record.result.clone(),
                }));
            }
            step.calls = records;
            let outcome = self.judge(&step, repeated);
            self.steps.push(step);
            match outcome {
                Outcome::Continue => {}
                Outcome::Done(reason, text) => return self.done(reason, text),
                Outcome::Failed(failure) => return self.fail(failure),
            }
        }
    }

    /// The tool choice of step `index`: the options' for the first request, `Auto` after it
    /// (unless tools were turned off), `None` for the last answer at the step limit.
    fn tool_choice(&self, index: usize, at_limit: bool) -> ToolChoice {
        match &self.options.tool_choice {
            _ if at_limit => ToolChoice::None,
            choice if index == 0 => choice.clone(),
            ToolChoice::None => ToolChoice::None,
            _ => ToolChoice::Auto,
        }
    }

    /// Sends the request, ending it when the run is cancelled.
    async fn ask(&self, index: usize) -> Result<ModelResponse, RunFailure> {
        let span = tracing::info_span!(
            "gen_ai.chat",
            gen_ai.operation.name = "chat",
            gen_ai.request.model = self.agent.model.model_name(),
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
        );
        let respond = self.agent.model.respond(&self.request);
        let answer: Result<ModelResponse, ModelError> = match &self.options.cancellation {
            Some(token) => tokio::select! {
                answer = respond.instrument(span.clone()) => answer,
                () = token.cancelled() => return Err(RunFailure::Cancelled),
            },
            None => respond.instrument(span.clone()).await,
        };
        match answer {
            Ok(response) => {
                span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                Ok(response)
            }
            Err(error) => Err(RunFailure::Model { step: index, error }),
        }
    }

    /// Runs one response's calls through the repeat guard; says whether one repeated itself
    /// past the limit (then none was run).
    async fn run_calls(
        &mut self,
        calls: &[tool_core::ToolCall],
    ) -> (Vec<CallRecord>, Option<(String, usize)>) {
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
        let mut call_options = CallOptions::default();
        call_options.cancellation = self.options.cancellation.clone();
        let runner = Calls {
            executor: self.agent.executor.as_ref(),
            offered: &self.request.tools,
            options: call_options,
            concurrency: self.options.max_concurrency,
        };
        let records = runner.run(calls, &verdicts).await;
        (records, repeated)
    }

    /// Whether the step that ran calls ends the run.
    fn judge(&mut self, step: &Step, repeated: Option<(String, usize)>) -> Outcome {
        if self.is_cancelled() {
            return Outcome::Failed(RunFailure::Cancelled);
        }
        if let Some((name, times)) = repeated {
            return Outcome::Failed(RunFailure::RepeatedCall { name, times });
        }
        if step.all_calls_failed() {
            self.failed_steps += 1;
        } else {
            self.failed_steps = 0;
        }
        let max_failed = self.options.max_failed_steps;
        if max_failed > 0 && self.failed_steps >= max_failed {
            let last = step.calls.last().map(describe).unwrap_or_default();
            return Outcome::Failed(RunFailure::TooManyFailedSteps {
                steps: self.failed_steps,
                last,
            });
        }
        let stopper = step
            .calls
            .iter()
            .find(|r| self.options.stop_at_tools.contains(&r.call.name));
        if let Some(record) = stopper {
            let text = match &record.result {
                Ok(output) => output.to_text(),
                Err(error) => error.to_model_text(),
            };
            let name = record.call.name.clone();
            return Outcome::Done(StopReason::ToolCalled { name }, text);
        }
        let text = step.text.clone().unwrap_or_default();
        if let Some(budget) = self.options.token_budget {
            let used = self.usage.total_tokens();
            if used >= budget {
                return Outcome::Done(StopReason::TokenBudget { used, budget }, text);
            }
        }
        if self.options.stop_when.as_ref().is_some_and(|stop| stop(step)) {
            return Outcome::Done(StopReason::Predicate, text);
        }
        Outcome::Continue
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
}

/// A failed call, for the developer.
fn describe(record: &CallRecord) -> String {
    match &record.result {
        Err(error) => error.to_string(),
        Ok(output) => format!("`{}`: {}", record.call.name, output.to_text()),
    }
}
