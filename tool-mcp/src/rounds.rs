//! A served call's questions to a client of protocol 2026-07-28, which takes no requests from
//! the server: the call is answered with `input_required` (the questions, and a sealed state),
//! and the client calls again with the user's answers (`inputResponses`, and the state back).
//! The tool then runs again from its start, and each question it asks is answered from what
//! the client gave, in order; a new question starts another round.
//!
//! So a tool that asks should ask before it acts: what it does before a question it has no
//! answer to yet is done again in the next round. The state carries the answers of earlier
//! rounds, sealed (HMAC-SHA256, rmcp's `RequestStateCodec`) with the server's key and bound
//! to the tool's name, for [`STATE_TTL`]: a client cannot forge or move it, and a server of
//! another key (another replica, unless they share one) refuses it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    RequestStateCodec, SealOptions,
};
use rmcp::ErrorData;
use serde_json::{json, Value};
use tool_runtime::{Elicitation, Elicited, Elicitor};

/// How long a round's state may be brought back.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The most questions one call may ask over all its rounds.
const MAX_QUESTIONS: usize = 32;

/// The server's key for sealing round states.
#[derive(Clone)]
pub(crate) struct StateKey(Arc<RequestStateCodec>);

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
            // No random source: states cannot be trusted across requests, so none opens.
            tracing::warn!(
                "no random source for the round-state key: questions over 2026-07-28 will fail"
            );
        }
        StateKey(Arc::new(RequestStateCodec::new_unchecked(key.to_vec())))
    }

    /// A key given by the user (shared by replicas), at least 32 bytes.
    pub(crate) fn given(key: &[u8]) -> Result<Self, String> {
        RequestStateCodec::try_new(key.to_vec())
            .map(|codec| StateKey(Arc::new(codec)))
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
}

fn bound_to(tool: &str) -> Vec<u8> {
    format!("ai-tool rounds of tool {tool}").into_bytes()
}

impl Rounds {
    /// The rounds of `request`: the answers its sealed state carries and those it brings.
    pub(crate) fn of(
        request: &CallToolRequestParams,
        key: &StateKey,
    ) -> Result<Arc<Self>, ErrorData> {
        let mut answers: BTreeMap<String, Value> = match &request.request_state {
            None => BTreeMap::new(),
            Some(state) => key
                .0
                .open_json_with(state, &bound_to(&request.name))
                .map_err(|e| {
                    ErrorData::invalid_params(
                        format!(
                            "the requestState is not this server's for this tool, or is older \
                             than {STATE_TTL:?} ({e}): call the tool again from the start"
                        ),
                        None,
                    )
                })?,
        };
        for (key, value) in request.input_responses.iter().flatten() {
            answers.insert(key.clone(), value.clone());
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
        }))
    }

    /// The call's elicitor: each question is answered from the answers brought, in order;
    /// the first without one stops the tool (it is asked in the next round).
    pub(crate) fn elicitor(self: &Arc<Self>) -> Elicitor {
        let rounds = Arc::clone(self);
        Arc::new(move |question: Elicitation| {
            let answered = rounds.answer(question);
            Box::pin(async move { answered })
        })
    }

    fn answer(&self, question: Elicitation) -> Result<Elicited, String> {
        let index = {
            let mut asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
            *asked += 1;
            *asked
        };
        if index > MAX_QUESTIONS {
            return Err(format!("more than {MAX_QUESTIONS} questions in one call"));
        }
        let key = format!("elicit-{index}");
        let Some(answer) = self.answers.get(&key) else {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            waiting.get_or_insert((key, question));
            return Err("the user's answer is asked of the client (input required)".into());
        };
        let answer: ElicitResult = serde_json::from_value(answer.clone()).map_err(|e| {
            format!("the client's answer to {key} is not an elicitation result: {e}")
        })?;
        Ok(match answer.action {
            ElicitationAction::Accept => {
                Elicited::Accepted(answer.content.unwrap_or_else(|| json!({})))
            }
            ElicitationAction::Decline => Elicited::Declined,
            _ => Elicited::Cancelled,
        })
    }

    /// When the tool stopped at a question without an answer: the `input_required` answer
    /// asking it, with the state of the answers so far.
    pub(crate) fn input_required(
        &self,
        tool: &str,
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
        let bound = bound_to(tool);
        let options = SealOptions::new().associated_data(&bound).ttl(STATE_TTL);
        let state = key.0.seal_json_with(&self.answers, &options).map_err(|e| {
            ErrorData::internal_error(format!("sealing the round state: {e}"), None)
        })?;
        let mut requests = BTreeMap::new();
        requests.insert(question_key, request);
        Ok(Some(InputRequiredResult::new(Some(requests), Some(state))))
    }
}
