//! A served call's questions to a client of protocol 2026-07-28, which takes no requests from
//! the server: the call is answered with `input_required` (the questions, and a sealed state),
//! and the client calls again with the user's answers (`inputResponses`, and the state back).
//! The tool then runs again from its start, and each question it asks is answered from what
//! the client gave, in order; a new question starts another round.
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
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    RequestStateCodec, SealOptions,
};
use rmcp::ErrorData;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tool_runtime::{Elicitation, Elicited, Elicitor};

/// How long a round's state may be brought back.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The most questions one call may ask over all its rounds.
const MAX_QUESTIONS: usize = 32;

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

/// One call's rounds: the answers it was brought, and the question it is waiting on.
pub(crate) struct Rounds {
    /// Answers by question key, of every round so far.
    answers: BTreeMap<String, Value>,
    /// How many questions the tool asked in this round.
    asked: Mutex<usize>,
    /// The first question without an answer, by its key.
    waiting: Mutex<Option<(String, Elicitation)>>,
    /// Cancels the call when it asks a question without an answer, so that nothing it would
    /// do after the question happens before the user has answered.
    stop: CancellationToken,
}

/// What a state is bound to: the tool and its arguments (object keys sorted).
fn bound_to(request: &CallToolRequestParams) -> Vec<u8> {
    let args = Value::Object(request.arguments.clone().unwrap_or_default());
    let mut bound = format!("ai-tool rounds of tool {}\n", request.name).into_bytes();
    canonical(&args, &mut bound);
    bound
}

/// `value` as JSON text with every object's keys sorted.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
                out.push(b':');
                canonical(&map[key], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
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
        if answers.len() > MAX_QUESTIONS {
            return Err(ErrorData::invalid_params(
                format!("more than {MAX_QUESTIONS} answers in one call"),
                None,
            ));
        }
        Ok(Arc::new(Rounds {
            answers,
            asked: Mutex::new(0),
            waiting: Mutex::new(None),
            stop,
        }))
    }

    /// The call's elicitor: each question is answered from the answers brought, in order;
    /// the first without one stops the call (its question is asked in the next round): the
    /// call is cancelled and the question never answers, so the tool cannot go on without it.
    pub(crate) fn elicitor(self: &Arc<Self>) -> Elicitor {
        let rounds = Arc::clone(self);
        Arc::new(move |question: Elicitation| match rounds.answer(question) {
            Some(answered) => Box::pin(async move { answered }),
            None => Box::pin(std::future::pending()),
        })
    }

    /// The answer to the next question; `None` when it has none yet (the call is stopped).
    fn answer(&self, question: Elicitation) -> Option<Result<Elicited, String>> {
        let index = {
            let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
            *asked += 1;
            *asked
        };
        if index > MAX_QUESTIONS {
            return Some(Err(format!(
                "more than {MAX_QUESTIONS} questions in one call"
            )));
        }
        let key = format!("elicit-{index}");
        let Some(answer) = self.answers.get(&key) else {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            waiting.get_or_insert((key, question));
            self.stop.cancel();
            return None;
        };
        let answer: ElicitResult = match serde_json::from_value(answer.clone()) {
            Ok(answer) => answer,
            Err(e) => {
                return Some(Err(format!(
                    "the client's answer to {key} is not an elicitation result: {e}"
                )))
            }
        };
        Some(Ok(match answer.action {
            ElicitationAction::Accept => {
                Elicited::Accepted(answer.content.unwrap_or_else(|| json!({})))
            }
            ElicitationAction::Decline => Elicited::Declined,
            _ => Elicited::Cancelled,
        }))
    }

    /// When the tool stopped at a question without an answer: the `input_required` answer
    /// asking it, with the state of the answers so far.
    pub(crate) fn input_required(
        &self,
        call: &CallToolRequestParams,
        key: &StateKey,
    ) -> Result<Option<InputRequiredResult>, ErrorData> {
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some((question_key, question)) = waiting else {
            return Ok(None);
        };
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
