//! What a step's answer leads to, decided apart from doing it: a pure function of how the
//! answer ended and where the run stands. The loop asks the model, calls [`decide`], and
//! carries the decision out.

use serde_json::Value;
use tool_model::Ending;

use crate::result::{RunFailure, StopReason};

/// The answer of one step, as the decision reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Answer<'a> {
    /// How the answer ended, as its client read it.
    pub ending: Ending,
    /// Whether calls are left to run (those of a request with tools off, or of an answer cut
    /// short, are not).
    pub has_calls: bool,
    /// The answer's text, with the text of the turn the API paused before it.
    pub text: &'a str,
    /// The API's finish reason, in its words.
    pub reason: &'a str,
}

/// Where the run stands when a step's answer comes.
#[derive(Debug, Clone)]
pub(super) struct Standing {
    /// The step, from 0.
    pub index: usize,
    /// The limit the run had reached before this step (it was asked for its answer at the
    /// limit), if any.
    pub limit: Option<StopReason>,
    /// Whether the step's request let the model call tools.
    pub tools_on: bool,
    /// [`RunOptions::max_steps`](crate::RunOptions::max_steps).
    pub max_steps: usize,
    /// [`RunOptions::answer_at_limit`](crate::RunOptions::answer_at_limit).
    pub answer_at_limit: bool,
    /// Steps that failed in a row before this one.
    pub failed_steps: usize,
    /// [`RunOptions::max_failed_steps`](crate::RunOptions::max_failed_steps) (0: no limit).
    pub max_failed_steps: usize,
    /// How many more times an answer that does not follow the output schema may be retold.
    pub output_retries: usize,
}

/// What the loop does with a step's answer.
#[derive(Debug)]
pub(super) enum StepDecision {
    /// Run the answer's calls.
    RunCalls,
    /// The run ends, for this reason, with the answer's text and the output it was read into.
    End(StopReason, Option<Value>),
    /// The run fails.
    Fail(RunFailure),
    /// The model's call could not be read: the step counts as failed, and the model is told
    /// and asked again.
    AskAgain,
    /// The API paused a long turn: the model is asked again at once, with nothing added.
    GoOn,
    /// The answer does not follow the run's output schema: the model is told this and asked
    /// again.
    Retell(String),
}

/// What `answer` leads to. `stop_after` says whether the run stops after a step that goes on
/// (its token budget, its predicate); `check` reads the answer's text against the run's output
/// schema (`None` without one). Each is asked only when the decision needs it.
pub(super) fn decide(
    answer: Answer<'_>,
    run: &Standing,
    stop_after: impl FnOnce() -> Option<StopReason>,
    check: impl FnOnce(&str) -> Option<Result<Value, String>>,
) -> StepDecision {
    if answer.has_calls {
        return StepDecision::RunCalls;
    }
    let reason = || answer.reason.to_owned();
    let at_limit = run.limit.is_some();
    match answer.ending {
        // An answer cut short or declined is not checked: it ends the run as it is.
        Ending::CutAtLimit => {
            return StepDecision::End(StopReason::Truncated { reason: reason() }, None)
        }
        Ending::Declined => {
            return StepDecision::End(StopReason::Declined { reason: reason() }, None)
        }
        // A call written wrong is a failed step when tools are on: the model is told and asked
        // again, or on the last step, asked for its answer at the limit; without that request
        // the run stops at its limit, as any run whose model still calls tools.
        Ending::MalformedCall if !at_limit && run.tools_on => {
            let failed = run.failed_steps.saturating_add(1);
            if run.max_failed_steps > 0 && failed >= run.max_failed_steps {
                return StepDecision::Fail(RunFailure::TooManyFailedSteps {
                    steps: failed,
                    last: format!(
                        "step {}: the model's tool call was malformed ({})",
                        run.index, answer.reason
                    ),
                });
            }
            if run.index.saturating_add(1) >= run.max_steps && !run.answer_at_limit {
                let steps = run.max_steps;
                return StepDecision::End(StopReason::MaxSteps { steps }, None);
            }
            return StepDecision::AskAgain;
        }
        // A turn the API paused (Anthropic's `pause_turn`, a long turn of its server tools)
        // stays last in the transcript as it came, and the model is asked again at once: it
        // goes on with the turn. Each continuation is a step, bound by the limits as any other;
        // at the limit, the run ends with what came.
        Ending::Paused => {
            return match run.limit.clone().or_else(stop_after) {
                Some(stop) => StepDecision::End(stop, None),
                None => StepDecision::GoOn,
            };
        }
        _ => {}
    }
    let stop = run.limit.clone().unwrap_or(StopReason::Finished);
    // Another answer needs a step that can still ask with tools, or one more request at the
    // limit.
    let room = run.index.saturating_add(1) < run.max_steps || run.answer_at_limit;
    match check(answer.text) {
        None => StepDecision::End(stop, None),
        Some(Ok(output)) => StepDecision::End(stop, Some(output)),
        Some(Err(told)) if !at_limit && room && run.output_retries > 0 => {
            StepDecision::Retell(told)
        }
        Some(Err(told)) => StepDecision::Fail(RunFailure::Output(told)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Decisions compare as they print (a failure holds errors that do not compare).
    macro_rules! assert_same {
        ($left:expr, $right:expr $(, $($message:tt)+)?) => {
            assert_eq!(format!("{:?}", $left), format!("{:?}", $right) $(, $($message)+)?)
        };
    }

    fn answer(ending: Ending) -> Answer<'static> {
        Answer {
            ending,
            has_calls: false,
            text: "the answer",
            reason: "why",
        }
    }

    fn standing() -> Standing {
        Standing {
            index: 0,
            limit: None,
            tools_on: true,
            max_steps: 10,
            answer_at_limit: false,
            failed_steps: 0,
            max_failed_steps: 3,
            output_retries: 1,
        }
    }

    fn never() -> Option<StopReason> {
        None
    }

    fn unchecked(_: &str) -> Option<Result<Value, String>> {
        None
    }

    fn decided(answer: Answer<'_>, run: &Standing) -> StepDecision {
        decide(answer, run, never, unchecked)
    }

    #[test]
    fn an_answer_with_calls_runs_them_whatever_else() {
        let with_calls = Answer {
            has_calls: true,
            ..answer(Ending::Paused)
        };
        let asked = std::cell::Cell::new(false);
        let decision = decide(
            with_calls,
            &standing(),
            || {
                asked.set(true);
                None
            },
            |_| {
                asked.set(true);
                None
            },
        );
        assert_same!(decision, StepDecision::RunCalls);
        assert!(!asked.get(), "neither the budget nor the schema is asked");
    }

    #[test]
    fn a_whole_answer_finishes_the_run_or_ends_it_at_its_limit() {
        assert_same!(
            decided(answer(Ending::Whole), &standing()),
            StepDecision::End(StopReason::Finished, None)
        );
        let at_limit = Standing {
            limit: Some(StopReason::MaxSteps { steps: 10 }),
            ..standing()
        };
        assert_same!(
            decided(answer(Ending::Whole), &at_limit),
            StepDecision::End(StopReason::MaxSteps { steps: 10 }, None)
        );
    }

    #[test]
    fn an_answer_cut_or_declined_ends_the_run_unchecked() {
        let checked = |_: &str| -> Option<Result<Value, String>> { panic!("not checked") };
        assert_same!(
            decide(answer(Ending::CutAtLimit), &standing(), never, checked),
            StepDecision::End(
                StopReason::Truncated {
                    reason: "why".into()
                },
                None
            )
        );
        assert_same!(
            decide(answer(Ending::Declined), &standing(), never, checked),
            StepDecision::End(
                StopReason::Declined {
                    reason: "why".into()
                },
                None
            )
        );
    }

    #[test]
    fn a_malformed_call_asks_again_until_too_many_steps_failed() {
        assert_same!(
            decided(answer(Ending::MalformedCall), &standing()),
            StepDecision::AskAgain
        );
        let two_failed = Standing {
            index: 4,
            failed_steps: 2,
            ..standing()
        };
        assert_same!(
            decided(answer(Ending::MalformedCall), &two_failed),
            StepDecision::Fail(RunFailure::TooManyFailedSteps {
                steps: 3,
                last: "step 4: the model's tool call was malformed (why)".into()
            })
        );
        let unlimited = Standing {
            max_failed_steps: 0,
            failed_steps: 1000,
            ..standing()
        };
        assert_same!(
            decided(answer(Ending::MalformedCall), &unlimited),
            StepDecision::AskAgain
        );
    }

    #[test]
    fn a_malformed_call_on_the_last_step_ends_the_run_at_its_limit() {
        let last = Standing {
            index: 9,
            ..standing()
        };
        assert_same!(
            decided(answer(Ending::MalformedCall), &last),
            StepDecision::End(StopReason::MaxSteps { steps: 10 }, None)
        );
        let answering_at_limit = Standing {
            answer_at_limit: true,
            ..last
        };
        assert_same!(
            decided(answer(Ending::MalformedCall), &answering_at_limit),
            StepDecision::AskAgain
        );
    }

    #[test]
    fn a_malformed_call_without_tools_or_at_the_limit_is_an_answer() {
        let tools_off = Standing {
            tools_on: false,
            ..standing()
        };
        assert_same!(
            decided(answer(Ending::MalformedCall), &tools_off),
            StepDecision::End(StopReason::Finished, None)
        );
        let at_limit = Standing {
            limit: Some(StopReason::ToolCallLimit { calls: 5 }),
            ..standing()
        };
        assert_same!(
            decided(answer(Ending::MalformedCall), &at_limit),
            StepDecision::End(StopReason::ToolCallLimit { calls: 5 }, None)
        );
    }

    #[test]
    fn a_paused_turn_goes_on_unless_the_run_must_stop() {
        assert_same!(
            decided(answer(Ending::Paused), &standing()),
            StepDecision::GoOn
        );
        let budget = StopReason::TokenBudget {
            used: 120,
            budget: 100,
        };
        assert_same!(
            decide(
                answer(Ending::Paused),
                &standing(),
                || Some(budget.clone()),
                unchecked
            ),
            StepDecision::End(budget.clone(), None)
        );
        let at_limit = Standing {
            limit: Some(StopReason::MaxSteps { steps: 10 }),
            ..standing()
        };
        assert_same!(
            decide(
                answer(Ending::Paused),
                &at_limit,
                || Some(budget),
                unchecked
            ),
            StepDecision::End(StopReason::MaxSteps { steps: 10 }, None),
            "the limit is said before the budget"
        );
    }

    #[test]
    fn an_answer_read_into_the_output_schema_is_the_runs_output() {
        let decision = decide(answer(Ending::Whole), &standing(), never, |text| {
            assert_eq!(text, "the answer");
            Some(Ok(json!({ "city": "Paris" })))
        });
        assert_same!(
            decision,
            StepDecision::End(StopReason::Finished, Some(json!({ "city": "Paris" })))
        );
    }

    #[test]
    fn an_answer_against_the_schema_is_retold_while_retries_and_steps_remain() {
        let rejected = |_: &str| Some(Err("city is missing".to_owned()));
        assert_same!(
            decide(answer(Ending::Whole), &standing(), never, rejected),
            StepDecision::Retell("city is missing".into())
        );
        let fails = StepDecision::Fail(RunFailure::Output("city is missing".into()));
        let no_retries = Standing {
            output_retries: 0,
            ..standing()
        };
        assert_same!(
            decide(answer(Ending::Whole), &no_retries, never, rejected),
            fails
        );
        let last_step = Standing {
            index: 9,
            ..standing()
        };
        assert_same!(
            decide(answer(Ending::Whole), &last_step, never, rejected),
            fails
        );
        let at_limit = Standing {
            limit: Some(StopReason::MaxSteps { steps: 10 }),
            answer_at_limit: true,
            ..standing()
        };
        assert_same!(
            decide(answer(Ending::Whole), &at_limit, never, rejected),
            fails
        );
        let last_step_answering_at_limit = Standing {
            answer_at_limit: true,
            ..last_step
        };
        assert_same!(
            decide(
                answer(Ending::Whole),
                &last_step_answering_at_limit,
                never,
                rejected
            ),
            StepDecision::Retell("city is missing".into())
        );
    }
}
