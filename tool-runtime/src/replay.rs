//! A call's questions answered from answers given before, for callers that cannot hold a
//! call open while the user thinks: an MCP server answering a 2026-07-28 client with
//! `input_required`, an agent run that stops and is resumed later, perhaps in another process.
//!
//! The call runs again from its start with the answers gathered so far; each question it asks
//! is answered from them, in order. The first question without an answer is kept, and the call
//! is cancelled at once and the question never answers, so that nothing the tool would do
//! after it happens before the user has answered. The caller then asks the user that question
//! and runs the call again with one answer more.
//!
//! So a tool that asks should ask before it acts: what it does before a question it has no
//! answer to yet is done again when it runs again.

use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::{Elicitation, Elicited, Elicitor};

/// The most questions one call may ask, over all its runs: the next one fails the call.
pub const MAX_QUESTIONS_PER_CALL: usize = 32;

/// An answer given before, and the question it answered when the caller kept it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    /// The question as it was asked, when the caller kept it: the answer is then given only
    /// to the same question (message and schema), so that a tool that asks something else
    /// the next time is asked again rather than answered with another question's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Elicitation>,
    /// What the user answered.
    pub answer: Elicited,
}

/// One run of a call whose questions are answered from answers given before.
#[derive(Debug)]
pub struct ReplayedQuestions {
    answers: Vec<Answered>,
    /// How many questions the tool asked in this run.
    asked: Mutex<usize>,
    /// The first question without an answer, with its number from 0.
    waiting: Mutex<Option<(usize, Elicitation)>>,
    /// Cancels the call when it asks a question without an answer.
    stop: CancellationToken,
}

impl ReplayedQuestions {
    /// A run answering from `answers`, in order, that cancels `stop` at the first question
    /// without an answer. `stop` should be the call's own token (a child of its caller's).
    pub fn new(answers: Vec<Answered>, stop: CancellationToken) -> Arc<Self> {
        Arc::new(ReplayedQuestions {
            answers,
            asked: Mutex::new(0),
            waiting: Mutex::new(None),
            stop,
        })
    }

    /// The elicitor of this run, for [`CallOptions::with_elicitor`](crate::CallOptions::with_elicitor).
    /// A question without an answer is answered only once the call is stopped, with an
    /// error: the tool sees its call cancelled, and a task the question was asked from (an
    /// imported server's, passed on) ends rather than waits for ever.
    pub fn elicitor(self: &Arc<Self>) -> Elicitor {
        let replay = Arc::clone(self);
        Arc::new(move |question: Elicitation| match replay.answer(question) {
            Some(answered) => Box::pin(async move { answered }),
            None => {
                let stop = replay.stop.clone();
                Box::pin(async move {
                    stop.cancelled().await;
                    Err(
                        "the call stopped to ask this question; it runs again with the answer"
                            .to_owned(),
                    )
                })
            }
        })
    }

    /// The answer to the next question; `None` when it has none yet (the call is stopped).
    fn answer(&self, question: Elicitation) -> Option<Result<Elicited, String>> {
        let index = {
            let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
            *asked += 1;
            *asked - 1
        };
        if index >= MAX_QUESTIONS_PER_CALL {
            return Some(Err(format!(
                "more than {MAX_QUESTIONS_PER_CALL} questions in one call \
                 (MAX_QUESTIONS_PER_CALL)"
            )));
        }
        let given = self.answers.get(index).filter(|given| {
            given
                .question
                .as_ref()
                .is_none_or(|asked| *asked == question)
        });
        match given {
            Some(given) => Some(Ok(given.answer.clone())),
            None => {
                let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
                waiting.get_or_insert((index, question));
                self.stop.cancel();
                None
            }
        }
    }

    /// The question the call stopped at, with its number from 0 (the answers before it are
    /// the first that many given), if it stopped at one. Taken: a second call gives `None`.
    pub fn take_waiting(&self) -> Option<(usize, Elicitation)> {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Whether the call stopped at a question without an answer.
    pub fn is_waiting(&self) -> bool {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The answers this run was given.
    pub fn answers(&self) -> &[Answered] {
        &self.answers
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{CallOptions, DynamicTool, Executor};
    use tool_core::{ToolErrorKind, ToolOutput};

    /// A tool that asks two questions and says what it got; it counts the times it got past
    /// the first.
    fn executor(past_first: Arc<Mutex<usize>>) -> Executor {
        let ask = DynamicTool::new(
            "invoice",
            "Sends an invoice.",
            json!({ "type": "object", "properties": {} }),
            move |_, ctx| {
                let past_first = Arc::clone(&past_first);
                async move {
                    let first = ctx.elicit("Which email?", email()).await?;
                    *past_first.lock().unwrap() += 1;
                    let second = ctx.elicit("Send now?", json!({ "type": "object" })).await?;
                    Ok(ToolOutput::text(format!("{first:?} {second:?}")))
                }
            },
        );
        Executor::builder()
            .registered_tools(false)
            .tool(ask)
            .build()
            .unwrap()
    }

    fn email() -> serde_json::Value {
        json!({ "type": "object", "properties": { "email": { "type": "string" } } })
    }

    fn answered(message: &str, schema: serde_json::Value, answer: Elicited) -> Answered {
        Answered {
            question: Some(Elicitation {
                message: message.into(),
                schema,
            }),
            answer,
        }
    }

    #[tokio::test]
    async fn each_run_stops_at_the_first_question_without_an_answer() {
        let past_first = Arc::new(Mutex::new(0));
        let exec = executor(Arc::clone(&past_first));
        let run = |answers: Vec<Answered>| {
            let exec = exec.clone();
            async move {
                let replay = ReplayedQuestions::new(answers, CancellationToken::new());
                let options = CallOptions {
                    cancellation: Some(replay.stop.clone()),
                    ..CallOptions::default()
                }
                .with_elicitor(replay.elicitor());
                let result = exec.execute_with("invoice", json!({}), &options).await;
                (result, replay.take_waiting())
            }
        };
        // No answers: stopped at the first question, and cancelled there.
        let (result, waiting) = run(Vec::new()).await;
        assert_eq!(result.unwrap_err().kind(), ToolErrorKind::Cancelled);
        let (index, question) = waiting.unwrap();
        assert_eq!((index, question.message.as_str()), (0, "Which email?"));
        assert_eq!(*past_first.lock().unwrap(), 0);
        // One answer: stopped at the second.
        let email_answer = answered(
            "Which email?",
            email(),
            Elicited::Accepted(json!({ "email": "a@example.com" })),
        );
        let (_, waiting) = run(vec![email_answer.clone()]).await;
        assert_eq!(waiting.unwrap().0, 1);
        // Both: the call ends.
        let send = answered("Send now?", json!({ "type": "object" }), Elicited::Declined);
        let (result, waiting) = run(vec![email_answer, send.clone()]).await;
        assert!(waiting.is_none());
        let text = result.unwrap().to_text();
        assert!(
            text.contains("a@example.com") && text.contains("Declined"),
            "{text}"
        );
        // An answer kept with another question is not given to this one.
        let (_, waiting) = run(vec![send]).await;
        assert_eq!(waiting.unwrap().0, 0);
    }

    #[tokio::test]
    async fn a_call_asks_at_most_so_many_questions() {
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(DynamicTool::new(
                "curious",
                "Asks and asks.",
                json!({ "type": "object" }),
                |_, ctx| async move {
                    loop {
                        ctx.elicit("Again?", json!({ "type": "object" })).await?;
                    }
                },
            ))
            .build()
            .unwrap();
        let answers = vec![
            Answered {
                question: None,
                answer: Elicited::Accepted(json!({})),
            };
            MAX_QUESTIONS_PER_CALL
        ];
        let replay = ReplayedQuestions::new(answers, CancellationToken::new());
        let options = CallOptions::default().with_elicitor(replay.elicitor());
        let err = exec
            .execute_with("curious", json!({}), &options)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("MAX_QUESTIONS_PER_CALL"), "{err}");
        assert!(!replay.is_waiting());
    }
}
