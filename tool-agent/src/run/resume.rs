//! Going on with an interrupted run: the decisions matched to the pending calls, the decided
//! calls run or refused, then the loop.

use std::time::Instant;

use tool_core::{ToolCall, ToolOutput};
use tool_runtime::Answered;
use tracing::Instrument;

use super::result_cap::{cap_for, result_message};
use super::{early_failure, Interrupted, Outcome, Run};
use crate::agent::Agent;
use crate::approval::{
    ApprovalVerdict, Decision, PendingApproval, PendingQuestion, RunState, StepHead,
};
use crate::events::RunEvent;
use crate::options::RunOptions;
use crate::repeat::Verdict;
use crate::result::{CallRecord, RunError, RunFailure, RunResult, Step};
use tool_model::message::Message;
use tool_model::Ending;

impl Agent {
    /// Goes on with an interrupted run, with a decision on each pending call.
    ///
    /// Each decision must name a pending call by id and by the hash of the arguments it
    /// approved; a decision that matches no pending call, or a pending call without a
    /// decision, is [`RunFailure::Approval`] and nothing runs. Approved calls run (with the
    /// edited arguments, validated like any call's), rejected ones give the model the reason,
    /// and the loop goes on with the same tools offered. The options are this part's: its
    /// `max_steps` counts the steps before the interruption.
    ///
    /// The interrupted step is finished here and judged whole: with the calls that ran before
    /// the interruption (as the model read their results), a hook's termination of it, and
    /// the decided calls, under its own number. It is the first of the result's
    /// [`steps`](RunResult::steps), with its usage: the interrupted result had that step too.
    /// The result's [`RunResult::usage`] is the whole run's, the interrupted part's included
    /// (as a refusal's `partial` usage is): do not add the two parts' up. A rejected call does
    /// not count toward [`RunOptions::max_failed_steps`].
    ///
    /// Resume a state once: nothing here can tell that a stored state was resumed before.
    pub async fn resume(
        &self,
        state: RunState,
        decisions: &[Decision],
        options: &RunOptions,
    ) -> Result<RunResult, RunError> {
        self.resume_with_events(state, decisions, options, None)
            .await
    }

    /// [`Agent::resume`], yielding what happens as it happens, as
    /// [`Agent::run_stream`] does: each decided call as it starts and its result, the model's
    /// text as it comes, each step, and last [`RunEvent::Finished`] with what `resume` would
    /// have returned. A run streamed to its interruption goes on streaming.
    ///
    /// The stream is not `Unpin`: pin it (`std::pin::pin!`) to poll it.
    pub fn resume_stream<'a>(
        &'a self,
        state: RunState,
        decisions: &'a [Decision],
        options: &'a RunOptions,
    ) -> impl futures_util::Stream<Item = RunEvent> + Send + 'a {
        super::event_stream(move |events| {
            self.resume_with_events(state, decisions, options, Some(events))
        })
    }

    async fn resume_with_events(
        &self,
        state: RunState,
        decisions: &[Decision],
        options: &RunOptions,
        events: Option<super::Events>,
    ) -> Result<RunResult, RunError> {
        let decided = self
            .check_state(&state, options)
            .and_then(|()| match_decisions(&state, decisions))
            .and_then(|decided| self.check_answers(&decided, options).map(|()| decided));
        let decided = match decided {
            Ok(decided) => decided,
            Err(why) => {
                let usage = state.usage;
                let transcript = closed(state.messages, &state.done, &state.pending, &why);
                let mut error = early_failure(RunFailure::Approval(why), transcript);
                error.partial.usage = usage;
                return Err(error);
            }
        };
        let offered = self.offered_by_name(&state.offered, options);
        let mut run = Run::new(self, options, state.messages, offered);
        run.events = events;
        run.usage = state.usage;
        run.failed_steps = state.failed_steps;
        run.tool_calls = state.tool_calls;
        run.repeats = state.repeats;
        run.approved_tools = state.approved_tools;
        // The numbers the model saw before the interruption keep their references.
        run.scope.restore(state.references, state.reference_count);
        // The interrupted step is finished here, not counted again.
        run.first_step = state.steps.saturating_sub(1);
        // Nothing runs when the answer could not be checked anyway.
        if let Err(problem) = &run.output_check {
            let messages = std::mem::take(&mut run.request.messages);
            run.request.messages = closed(messages, &state.done, &state.pending, problem);
            let failure = RunFailure::Output(problem.clone());
            return run.fail(failure);
        }
        let scope = run.scope.clone();
        let interrupted = Interrupted {
            done: state.done,
            rejected: state.rejected,
            pending: Vec::new(),
            terminated: state.terminated,
            head: state.step,
        };
        scope
            .enter(run.resume_calls(interrupted, decided))
            .instrument(self.run_span())
            .await
    }
}

impl Agent {
    /// Each result given with [`PendingApproval::answer`] held to the tool's output schema,
    /// as the executor holds its own tools' results, and each reply to a question to the
    /// schema it was asked with: one refused is sent back to the caller, who can answer
    /// again, rather than on to the tool or the model.
    fn check_answers(
        &self,
        decided: &[(usize, PendingApproval, ApprovalVerdict)],
        options: &RunOptions,
    ) -> Result<(), String> {
        let exec = self.executor_for(options);
        for (_, pending, verdict) in decided {
            if let (ApprovalVerdict::Reply(answer), Some(asked)) = (verdict, &pending.question) {
                asked.question.check(answer).map_err(|why| {
                    format!(
                        "the reply to call `{}` to `{}` is refused: {why}",
                        pending.call.id.as_deref().unwrap_or_default(),
                        pending.call.name,
                    )
                })?;
            }
            if let (ApprovalVerdict::Answer(output), Some(exec)) = (verdict, exec) {
                exec.check_output(&pending.call.name, output).map_err(|e| {
                    format!(
                        "the answer to call `{}` to `{}` is refused: {}",
                        pending.call.id.as_deref().unwrap_or_default(),
                        pending.call.name,
                        e.to_model_text()
                    )
                })?;
            }
        }
        Ok(())
    }
}

impl Agent {
    /// A stored state is input: it may have been edited where it waited. It is held to what
    /// this agent could have done with these options, so that an edit can narrow what the
    /// resumed run does, never widen it: each tool it says was offered is one this agent
    /// offers under these options (purpose gates, selection, executable or external); the
    /// tools approved for the run and the pending calls are among those offered; each pending
    /// call's arguments hash is the hash of its call; and no position of the answer is both
    /// done and pending, or given twice.
    fn check_state(&self, state: &RunState, options: &RunOptions) -> Result<(), String> {
        let edited = |what: String| {
            Err(format!(
                "the run state cannot be resumed: {what}; it was changed since it was saved, \
                 or saved by another agent or with other options"
            ))
        };
        if let Some(key) = &self.state_key {
            if !key.verifies(state) {
                return edited("its seal is not this agent's state key's".into());
            }
        }
        if let Some(name) = state
            .offered
            .iter()
            .find(|name| !self.may_have_offered(name, options))
        {
            return edited(format!(
                "it says `{name}` was offered, which this agent does not offer"
            ));
        }
        let offered = |name: &String| state.offered.contains(name);
        if let Some(name) = state.approved_tools.iter().find(|name| !offered(name)) {
            return edited(format!("it approves `{name}`, which the run did not offer"));
        }
        let mut positions = std::collections::HashSet::new();
        for (index, pending) in &state.pending {
            if !offered(&pending.call.name) {
                let name = &pending.call.name;
                return edited(format!(
                    "a pending call is to `{name}`, which the run did not offer"
                ));
            }
            if crate::repeat::fingerprint(&pending.call) != pending.arguments_hash {
                let id = pending.call.id.as_deref().unwrap_or_default();
                return edited(format!(
                    "pending call `{id}`'s arguments do not match their hash"
                ));
            }
            if !positions.insert(*index) {
                return edited(format!("position {index} of the answer is pending twice"));
            }
            if let Some(asked) = &pending.question {
                let id = pending.call.id.as_deref().unwrap_or_default();
                if pending.external {
                    return edited(format!(
                        "pending call `{id}` is external and asked a question"
                    ));
                }
                if asked.answered.len() >= tool_runtime::MAX_QUESTIONS_PER_CALL {
                    return edited(format!(
                        "pending call `{id}` holds {} answers or more (MAX_QUESTIONS_PER_CALL)",
                        tool_runtime::MAX_QUESTIONS_PER_CALL
                    ));
                }
                // Each answer kept is bound to its question and fits it: one the user never
                // gave could otherwise answer any question.
                for given in &asked.answered {
                    let fits = (given.question.as_ref())
                        .is_some_and(|question| question.check(&given.answer).is_ok());
                    if !fits {
                        return edited(format!(
                            "pending call `{id}` holds an answer without its question, or one \
                             its question's schema refuses"
                        ));
                    }
                }
            }
        }
        if let Some((index, _)) = state.done.iter().find(|(i, _)| !positions.insert(*i)) {
            return edited(format!("position {index} of the answer is given twice"));
        }
        let done = |index: &usize| state.done.iter().any(|(i, _)| i == index);
        if let Some(index) = state.rejected.iter().find(|index| !done(index)) {
            return edited(format!("position {index} is rejected and has no result"));
        }
        Ok(())
    }
}

/// Each pending call with its decision, or why the decisions do not fit the calls.
fn match_decisions(
    state: &RunState,
    decisions: &[Decision],
) -> Result<Vec<(usize, PendingApproval, ApprovalVerdict)>, String> {
    for decision in decisions {
        let fits = state.pending.iter().any(|(_, p)| {
            p.call.id.as_deref().unwrap_or_default() == decision.call_id
                && p.arguments_hash == decision.arguments_hash
                && replies_to(decision, p)
        });
        if !fits {
            return Err(format!(
                "the decision on call `{}` (arguments hash {}) matches no pending call; \
                 a decision applies only to the arguments it was made on",
                decision.call_id, decision.arguments_hash
            ));
        }
    }
    // One decision for each pending call: calls with the same id and arguments (a model that
    // gives no ids, or repeats one) take theirs in order, and a decision left over is refused
    // rather than one of two contradicting ones being chosen.
    let mut used = vec![false; decisions.len()];
    let matched = state
        .pending
        .iter()
        .map(|(index, pending)| {
            let id = pending.call.id.as_deref().unwrap_or_default();
            let position = (0..decisions.len())
                .find(|&i| {
                    let d = &decisions[i];
                    !used[i]
                        && d.call_id == id
                        && d.arguments_hash == pending.arguments_hash
                        && replies_to(d, pending)
                })
                .ok_or_else(|| {
                    format!(
                        "no decision on pending call `{id}` to `{}`",
                        pending.call.name
                    )
                })?;
            used[position] = true;
            let verdict = decisions[position].verdict.clone();
            // An external tool has nothing here to run: it takes its result or a refusal.
            let runs = !matches!(
                verdict,
                ApprovalVerdict::Answer(_) | ApprovalVerdict::Reject(_)
            );
            if pending.external && runs {
                return Err(format!(
                    "call `{id}` to `{}` is of an external tool: give its result with \
                     `answer(output)`, or `reject(reason)`",
                    pending.call.name
                ));
            }
            // A call that asked takes the answer, or a refusal; a reply fits nothing else.
            let replies = matches!(verdict, ApprovalVerdict::Reply(_));
            let rejects = matches!(verdict, ApprovalVerdict::Reject(_));
            if pending.question.is_some() && !(replies || rejects) {
                return Err(format!(
                    "call `{id}` to `{}` asked a question: give the answer with \
                     `reply(answer)`, or `reject(reason)`",
                    pending.call.name
                ));
            }
            if pending.question.is_none() && replies {
                return Err(format!(
                    "call `{id}` to `{}` asked nothing: a reply fits only a call that asked \
                     a question",
                    pending.call.name
                ));
            }
            Ok((*index, pending.clone(), verdict))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if let Some(extra) = used.iter().position(|used| !used) {
        return Err(format!(
            "a second decision on call `{}`: each pending call takes one",
            decisions[extra].call_id
        ));
    }
    Ok(matched)
}

/// Whether `decision`, when it is a reply, answers the question `pending` asks now: a reply is
/// bound to the question (and the answers before it), so that one made on an earlier question
/// of the same call answers nothing else.
fn replies_to(decision: &Decision, pending: &PendingApproval) -> bool {
    match decision.verdict {
        ApprovalVerdict::Reply(_) => {
            let asked = pending.question.as_ref().map(PendingQuestion::fingerprint);
            decision.question.is_some() && decision.question == asked
        }
        _ => true,
    }
}

/// The interrupted transcript of a resume that ran nothing, closed as the APIs need it: the
/// results of the calls that ran before the interruption, and each waiting call answered as
/// not run, saying `why`, in call order.
fn closed(
    mut messages: Vec<Message>,
    done: &[(usize, Message)],
    pending: &[(usize, PendingApproval)],
    why: &str,
) -> Vec<Message> {
    let not_run = pending.iter().map(|(index, pending)| {
        let record = CallRecord {
            result: Ok(ToolOutput::error(format!("The call was not run: {why}"))),
            call: pending.call.clone(),
            elapsed: Default::default(),
            repaired: None,
        };
        // A short note of the project's own: never cut.
        (
            *index,
            result_message(&record, cap_for(usize::MAX, None), None),
        )
    });
    let mut results: Vec<(usize, Message)> = done.iter().cloned().chain(not_run).collect();
    results.sort_by_key(|(index, _)| *index);
    messages.extend(results.into_iter().map(|(_, message)| message));
    messages
}

impl Run<'_> {
    /// The decided calls of an interrupted run; then the interrupted step, judged whole (the
    /// calls that ran before the interruption, the decided ones, and a hook's termination);
    /// then the loop.
    async fn resume_calls(
        mut self,
        interrupted: Interrupted,
        decided: Vec<(usize, PendingApproval, ApprovalVerdict)>,
    ) -> Result<RunResult, RunError> {
        let (answer_text, answer_calls) = self.interrupted_answer();
        let mut records: Vec<(usize, CallRecord)> = interrupted
            .done
            .iter()
            .filter_map(|(index, message)| {
                Some((*index, ran_record(&answer_calls, *index, message)?))
            })
            .collect();
        // The calls that ran before the interruption, whose results were given then.
        let ran_before: Vec<usize> = records.iter().map(|(index, _)| *index).collect();
        let mut messages = interrupted.done;
        let mut approved = Vec::new();
        let mut rejected = interrupted.rejected;
        // Calls run with arguments a person changed: the model, which wrote others, is told.
        let mut edited = Vec::new();
        // Every decided call, announced as it now starts (waiting, it was not).
        let mut starting = Vec::new();
        // The answers each approved call's questions take, by its place in `approved`.
        let mut replies: Vec<Vec<Answered>> = Vec::new();
        for (index, pending, verdict) in decided {
            let question = pending.question;
            let mut call = pending.call;
            if let ApprovalVerdict::ApproveWith(arguments) = &verdict {
                // The model's arguments as the executor reads them (JSON text parsed).
                let written = super::read_arguments(&call);
                let written = written.as_ref().map_or(&call.arguments, |c| &c.arguments);
                if *arguments != call.arguments && arguments != written {
                    edited.push((index, arguments.to_string()));
                }
                call.arguments = arguments.clone();
            }
            // A call that asked runs with the arguments it asked with: those a person set when
            // approving it, in an earlier part of the run, if they differ from the model's.
            if let (ApprovalVerdict::Reply(_), Some(made)) = (&verdict, answer_calls.get(index)) {
                let written = super::read_arguments(made);
                let written = written.as_ref().map_or(&made.arguments, |c| &c.arguments);
                if call.arguments != made.arguments && call.arguments != *written {
                    edited.push((index, call.arguments.to_string()));
                }
            }
            starting.push(call.clone());
            let output = match verdict {
                ApprovalVerdict::Approve | ApprovalVerdict::ApproveWith(_) => {
                    approved.push((index, call));
                    replies.push(Vec::new());
                    continue;
                }
                ApprovalVerdict::ApproveForSession => {
                    self.approved_tools.push(call.name.clone());
                    approved.push((index, call));
                    replies.push(Vec::new());
                    continue;
                }
                ApprovalVerdict::Reply(answer) => {
                    // Matched only to a call that asked (see `match_decisions`).
                    let mut answered = Vec::new();
                    if let Some(asked) = question {
                        answered = asked.answered;
                        answered.push(Answered {
                            question: Some(asked.question),
                            answer,
                        });
                    }
                    approved.push((index, call));
                    replies.push(answered);
                    continue;
                }
                ApprovalVerdict::Answer(output) => output,
                ApprovalVerdict::Reject(reason) => {
                    rejected.push(index);
                    ToolOutput::error(format!("The user did not allow this call: {reason}"))
                }
            };
            let record = CallRecord {
                result: Ok(output),
                call,
                elapsed: Default::default(),
                repaired: None,
            };
            messages.push((index, self.result_message(&record)));
            records.push((index, record));
        }
        let started = Instant::now();
        let (positions, calls): (Vec<usize>, Vec<ToolCall>) = approved.into_iter().unzip();
        let verdicts = vec![Verdict::Run; calls.len()];
        self.announce(self.step_number(), &starting);
        let runner = self.calls();
        let ran = runner.run(&calls, &verdicts, &replies).await;
        let terminated = interrupted.terminated.or(runner.take_terminated());
        // Calls that asked (again) wait for the answer: the step is interrupted once more.
        let mut asked: Vec<(usize, PendingApproval)> = Vec::new();
        let mut questions = runner.take_questions().into_iter().peekable();
        let mut ran_now = Vec::new();
        for (i, (index, record)) in positions.into_iter().zip(ran).enumerate() {
            if let Some((_, question)) = questions.next_if(|(q, _)| *q == i) {
                let pending =
                    PendingApproval::asking(record.call, question.question, question.answered);
                asked.push((index, pending));
            } else {
                ran_now.push((index, record));
            }
        }
        if self.is_cancelled() {
            // Cancelled: a question is not asked, the call ends cancelled.
            for (index, pending) in asked.drain(..) {
                let record = CallRecord {
                    result: Err(tool_core::ToolError::Cancelled {
                        tool: pending.call.name.clone(),
                    }),
                    call: pending.call,
                    elapsed: Default::default(),
                    repaired: None,
                };
                ran_now.push((index, record));
            }
        }
        for (index, record) in ran_now {
            let mut message = self.result_message(&record);
            if let (Some((_, arguments)), Message::Tool { text, .. }) =
                (edited.iter().find(|(i, _)| *i == index), &mut message)
            {
                *text = format!("The user changed this call's arguments to {arguments}; this is the result for those.\n{text}");
            }
            messages.push((index, message));
            records.push((index, record));
        }
        messages.sort_by_key(|(index, _)| *index);
        records.sort_by_key(|(index, _)| *index);
        let told: Vec<usize> = (records.iter().enumerate())
            .filter(|(_, (index, _))| ran_before.contains(index))
            .map(|(i, _)| i)
            .collect();
        // A state stored before the step's head was kept gives the defaults.
        let mut head = interrupted.head.unwrap_or_default();
        let tools_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        head.tools_ms = head.tools_ms.saturating_add(tools_ms);
        if !asked.is_empty() {
            let step = self.finished_step(answer_text, records, head.clone());
            self.push_step_except(step, &told);
            return self.interrupt(Interrupted {
                done: messages,
                rejected,
                pending: asked,
                terminated,
                head: Some(head),
            });
        }
        self.request
            .messages
            .extend(messages.into_iter().map(|(_, message)| message));
        // Positions in the step's calls of those a person rejected.
        let rejected: Vec<usize> = (records.iter().enumerate())
            .filter(|(_, (index, _))| rejected.contains(index))
            .map(|(i, _)| i)
            .collect();
        let step = self.finished_step(answer_text, records, head);
        let outcome = self.judge(&step, None, terminated, &rejected);
        self.push_step_except(step, &told);
        match outcome {
            Outcome::Continue => self.go().await,
            Outcome::Done(reason, text) => self.done(reason, text),
            Outcome::Failed(failure) => self.fail(failure),
            Outcome::Interrupted(stopped) => self.interrupt(stopped),
        }
    }

    /// The interrupted step, with the records of its calls by position in the answer.
    fn finished_step(
        &self,
        text: Option<String>,
        records: Vec<(usize, CallRecord)>,
        head: StepHead,
    ) -> Step {
        Step {
            index: self.step_number(),
            tool_choice: head.tool_choice,
            text,
            calls: records.into_iter().map(|(_, record)| record).collect(),
            usage: head.usage,
            model_time: std::time::Duration::from_millis(head.model_ms),
            // The calls that ran before the interruption, and those decided now.
            tools_time: std::time::Duration::from_millis(head.tools_ms),
            finish_reason: head.finish_reason,
            // Its calls ran: the answer ended whole (a cut answer's calls are never run).
            ending: Ending::Whole,
        }
    }

    /// The text and calls of the answer whose calls waited: the transcript's last answer.
    fn interrupted_answer(&self) -> (Option<String>, Vec<ToolCall>) {
        self.request
            .messages
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::Assistant { text, calls } => Some((text.clone(), calls.clone())),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// The record of a call that ran before the interruption, from the result the model reads
/// (the state keeps no more): its text, as an output or an error output.
fn ran_record(calls: &[ToolCall], index: usize, message: &Message) -> Option<CallRecord> {
    let Message::Tool { text, is_error, .. } = message else {
        return None;
    };
    let output = if *is_error {
        ToolOutput::error(text.clone())
    } else {
        ToolOutput::text(text.clone())
    };
    Some(CallRecord {
        call: calls.get(index)?.clone(),
        result: Ok(output),
        elapsed: Default::default(),
        repaired: None,
    })
}
