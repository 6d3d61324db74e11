//! A served call's questions to a client of protocol 2026-07-28, which takes no requests from
//! the server: the call is answered with `input_required` (the questions, and a sealed state),
//! and the client calls again with the user's answers (`inputResponses`, and the state back).
//! The tool then runs again from its start, its questions answered from what the client gave
//! ([`ReplayedQuestions`]); a new question starts another round.
//!
//! So a tool that asks should ask before it acts: what it does before a question it has no
//! answer to yet is done again in the next round. The state carries the answers of earlier
//! rounds and the key of the question asked, sealed (HMAC-SHA256, rmcp's `RequestStateCodec`)
//! with the server's key and bound to the tool and its arguments, for [`STATE_TTL`]: a client
//! cannot forge it, move it to another call, or answer anything but the question asked; a
//! server of another key (another replica, unless they share one) refuses it. A question
//! without an answer cancels the call at once, so nothing the tool would do after it happens
//! before the user answers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    RequestStateCodec, SealOptions,
};
use rmcp::ErrorData;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tool_runtime::{Answered, Elicited, Elicitor, ReplayedQuestions, MAX_QUESTIONS_PER_CALL};

/// How long a round's state may be brought back.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The server's key for sealing round states; `None` when the system gave no random bytes
/// for one (then no question is asked in rounds).
#[derive(Clone)]
pub(crate) struct StateKey(Option<Arc<RequestStateCodec>>);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(<hidden>)")
    }
}

impl StateKey {
    /// A key of 32 random bytes, the server's own.
    pub(crate) fn random() -> Self {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            tracing::warn!(
                "no random source for the round-state key: questions over 2026-07-28 will fail"
            );
            return StateKey(None);
        }
        StateKey(Some(Arc::new(RequestStateCodec::new_unchecked(
            key.to_vec(),
        ))))
    }

    /// A key given by the user (shared by replicas), at least 32 bytes.
    pub(crate) fn given(key: &[u8]) -> Result<Self, String> {
        RequestStateCodec::try_new(key.to_vec())
            .map(|codec| StateKey(Some(Arc::new(codec))))
            .map_err(|e| format!("the round-state key: {e}"))
    }
}

/// One call's rounds: the answers it was brought, by question key, and this round's run.
pub(crate) struct Rounds {
    /// Answers by question key (`elicit-1`, ...), of every round so far, as the client gave
    /// them: sealed again into the next round's state.
    answers: BTreeMap<String, Value>,
    replay: Arc<ReplayedQuestions>,
}

/// The key of question `index` (from 0) of a call.
fn question_key(index: usize) -> String {
    format!("elicit-{}", index + 1)
}

/// What a state is bound to: the tool and its arguments (object keys sorted).
fn bound_to(request: &CallToolRequestParams) -> Vec<u8> {
    let args = Value::Object(request.arguments.clone().unwrap_or_default());
    let mut bound = format!("ai-tool rounds of tool {}\n", request.name).into_bytes();
    bound.extend_from_slice(tool_core::canonical_json(&args).as_bytes());
    bound
}

impl Rounds {
    /// The rounds of `request`: the answers its sealed state carries, and the answer it
    /// brings to the question that state asked (answers to anything else are ignored).
    pub(crate) fn of(
        request: &CallToolRequestParams,
        key: &StateKey,
        stop: CancellationToken,
    ) -> Result<Arc<Self>, ErrorData> {
        let Some(codec) = &key.0 else {
            return Err(ErrorData::internal_error(
                "this server has no key to seal questions with (no random source)",
                None,
            ));
        };
        let mut answers = BTreeMap::new();
        if let Some(state) = &request.request_state {
            // The answers so far, and the key of the question asked.
            let sealed: Value = codec
                .open_json_with(state, &bound_to(request))
                .map_err(|_| {
                    ErrorData::invalid_params(
                        format!(
                            "the requestState is not this server's for this call, or is older \
                             than {STATE_TTL:?}: call the tool again from the start"
                        ),
                        None,
                    )
                })?;
            if let Some(sealed_answers) = sealed["answers"].as_object() {
                answers.extend(sealed_answers.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            let asked = sealed["asked"].as_str().unwrap_or_default();
            if let Some(answer) = request
                .input_responses
                .as_ref()
                .and_then(|given| given.get(asked))
            {
                answers.insert(asked.to_owned(), answer.clone());
            }
        }
        if answers.len() > MAX_QUESTIONS_PER_CALL {
            return Err(ErrorData::invalid_params(
                format!("more than {MAX_QUESTIONS_PER_CALL} answers in one call"),
                None,
            ));
        }
        // Answers in question order; the keys were given out one round at a time.
        let mut given = Vec::with_capacity(answers.len());
        for index in 0..answers.len() {
            let key = question_key(index);
            let Some(answer) = answers.get(&key) else {
                break;
            };
            let answer: ElicitResult = serde_json::from_value(answer.clone()).map_err(|e| {
                ErrorData::invalid_params(
                    format!("the answer to {key} is not an elicitation result: {e}"),
                    None,
                )
            })?;
            let answer = match answer.action {
                ElicitationAction::Accept => {
                    Elicited::Accepted(answer.content.unwrap_or_else(|| json!({})))
                }
                ElicitationAction::Decline => Elicited::Declined,
                _ => Elicited::Cancelled,
            };
            given.push(Answered {
                question: None,
                answer,
            });
        }
        Ok(Arc::new(Rounds {
            answers,
            replay: ReplayedQuestions::new(given, stop),
        }))
    }

    /// The call's elicitor: each question is answered from the answers brought, in order;
    /// the first without one stops the call (its question is asked in the next round).
    pub(crate) fn elicitor(&self) -> Elicitor {
        self.replay.elicitor()
    }

    /// When the tool stopped at a question without an answer: the `input_required` answer
    /// asking it, with the state of the answers so far.
    pub(crate) fn input_required(
        &self,
        call: &CallToolRequestParams,
        key: &StateKey,
    ) -> Result<Option<InputRequiredResult>, ErrorData> {
        let Some((index, question)) = self.replay.take_waiting() else {
            return Ok(None);
        };
        let question_key = question_key(index);
        let request: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": question.message,
                "requestedSchema": question.schema,
            }
        }))
        .map_err(|e| {
            ErrorData::internal_error(
                format!("the tool's question is not one MCP elicitation takes: {e}"),
                None,
            )
        })?;
        let Some(codec) = &key.0 else {
            return Ok(None);
        };
        let bound = bound_to(call);
        let options = SealOptions::new().associated_data(&bound).ttl(STATE_TTL);
        let sealed = json!({ "answers": self.answers, "asked": question_key });
        let state = codec.seal_json_with(&sealed, &options).map_err(|e| {
            ErrorData::internal_error(format!("sealing the round state: {e}"), None)
        })?;
        let mut requests = BTreeMap::new();
        requests.insert(question_key, request);
        Ok(Some(InputRequiredResult::new(Some(requests), Some(state))))
    }
}
