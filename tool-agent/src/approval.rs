//! Human in the loop: calls of tools that need approval are not run; the run stops with them
//! pending and a state to resume from, and a resumed run executes exactly what was approved.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::{ToolCall, ToolOutput, ToolSpec};
use tool_runtime::{Answered, Elicitation, Elicited};

use crate::repeat::{self, RepeatGuard};
use tool_model::message::{Message, Usage};

/// Which tools need approval before they run.
pub type ApprovalPolicy = Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>;

/// Which calls need approval before they run, by their arguments: the tool's spec, the call as
/// the model made it, and the run's context.
pub type CallApprovalPolicy =
    Arc<dyn Fn(&ToolSpec, &ToolCall, &crate::RunContext) -> bool + Send + Sync>;

/// A call waiting for a person's decision, for its result from outside, or for the answer to
/// a question it asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The call, as the model made it.
    pub call: ToolCall,
    /// The hash of its name and arguments (object keys sorted): what a decision is bound to.
    pub arguments_hash: String,
    /// Whether the call is of an external tool (declared, run outside the executor; see
    /// [`AgentBuilder::external_tools`](crate::AgentBuilder::external_tools)): it waits for
    /// its result, given with [`PendingApproval::answer`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
    /// The question the call asked the user mid-call
    /// ([`ToolContext::elicit`](tool_runtime::ToolContext::elicit)), which stopped it: it
    /// waits for the answer, given with [`PendingApproval::reply`], and then runs again from
    /// its start with the answers so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<PendingQuestion>,
}

/// A question a call asked, and the answers it was given before it (a call may ask several,
/// one run of the call each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingQuestion {
    /// What the tool asks: the message, and the schema of the answer.
    pub question: Elicitation,
    /// The answers to the call's earlier questions, in the order it asked them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered: Vec<Answered>,
}

impl PendingQuestion {
    /// The hash of the question and the answers before it (object keys sorted): what a
    /// reply is bound to. A binding, not a signature.
    pub fn fingerprint(&self) -> String {
        let bound = serde_json::json!({ "question": self.question, "answered": self.answered });
        repeat::fnv1a(&tool_core::canonical_json(&bound))
    }
}

impl PendingApproval {
    pub(crate) fn new(call: ToolCall, external: bool) -> Self {
        // Stable across processes and versions, so that a decision made in one process
        // matches its call in another. A binding, not a signature.
        let arguments_hash = repeat::fingerprint(&call);
        PendingApproval {
            call,
            arguments_hash,
            external,
            question: None,
        }
    }

    /// A call stopped at a question, with the answers it was given before it.
    pub(crate) fn asking(call: ToolCall, question: Elicitation, answered: Vec<Answered>) -> Self {
        PendingApproval {
            question: Some(PendingQuestion { question, answered }),
            ..PendingApproval::new(call, false)
        }
    }

    fn decide(&self, verdict: ApprovalVerdict) -> Decision {
        Decision {
            call_id: self.call.id.clone().unwrap_or_default(),
            arguments_hash: self.arguments_hash.clone(),
            question: None,
            verdict,
        }
    }

    /// Runs the call as the model made it.
    pub fn approve(&self) -> Decision {
        self.decide(ApprovalVerdict::Approve)
    }

    /// Runs the call with other arguments (checked against the schema like any call's).
    pub fn approve_with(&self, arguments: Value) -> Decision {
        self.decide(ApprovalVerdict::ApproveWith(arguments))
    }

    /// Runs the call, and every later call of this tool in the run without asking.
    pub fn approve_for_session(&self) -> Decision {
        self.decide(ApprovalVerdict::ApproveForSession)
    }

    /// Does not run the call; the model is told why.
    pub fn reject(&self, reason: impl Into<String>) -> Decision {
        self.decide(ApprovalVerdict::Reject(reason.into()))
    }

    /// Does not run the call: `output` is its result, as a tool run outside the executor
    /// (by the client, a browser, a person) gave it. What an [`external`](Self::external)
    /// call waits for.
    pub fn answer(&self, output: ToolOutput) -> Decision {
        self.decide(ApprovalVerdict::Answer(output))
    }

    /// Answers the [`question`](Self::question) the call asked: it runs again from its start,
    /// and this answer and those before it are given to its questions in order. An accepted
    /// answer must match the question's schema. Replying goes on with the call, as approving
    /// it does.
    pub fn reply(&self, answer: Elicited) -> Decision {
        Decision {
            question: self.question.as_ref().map(PendingQuestion::fingerprint),
            ..self.decide(ApprovalVerdict::Reply(answer))
        }
    }
}

/// A person's decision on one pending call, bound to its id and to the hash of the arguments
/// that were shown: it applies to that call with those arguments and to nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The call's id.
    pub call_id: String,
    /// The hash of the call that was decided on ([`PendingApproval::arguments_hash`]).
    pub arguments_hash: String,
    /// For a reply, the question it answers ([`PendingQuestion::fingerprint`]): a reply
    /// applies to that question alone, not to a later one of the same call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// What was decided.
    pub verdict: ApprovalVerdict,
}

/// What was decided on a pending call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalVerdict {
    /// Run it as it is.
    Approve,
    /// Run it with these arguments instead.
    ApproveWith(Value),
    /// Run it, and the tool's later calls in the run without asking.
    ApproveForSession,
    /// Do not run it; the reason goes to the model.
    Reject(String),
    /// Do not run it: this is its result, from outside the executor.
    Answer(ToolOutput),
    /// Run it again, with this answer to the question it asked.
    Reply(Elicited),
}

/// Where an interrupted run stopped: everything [`Agent::resume`](crate::Agent::resume) needs,
/// serializable so that it can wait for a person in a database.
///
/// Keep it where users cannot edit it (or sign it): it holds the names of the tools the run
/// offered, and the calls that wait.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    /// The transcript up to the answer whose calls wait.
    pub(crate) messages: Vec<Message>,
    /// The results of that answer's calls that needed no approval, by position in the answer.
    pub(crate) done: Vec<(usize, Message)>,
    /// Positions among `done` of calls a person rejected (a resume stopped again by a
    /// question): not counted as the model's failures when the step is judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) rejected: Vec<usize>,
    /// The calls that wait, by position in the answer.
    pub(crate) pending: Vec<(usize, PendingApproval)>,
    /// The names of the tools the run offered.
    pub(crate) offered: Vec<String>,
    /// Tools approved for the rest of the run.
    pub(crate) approved_tools: Vec<String>,
    /// Steps run so far, the interrupted one included.
    pub(crate) steps: usize,
    pub(crate) usage: Usage,
    pub(crate) failed_steps: usize,
    pub(crate) repeats: RepeatGuard,
    /// Tool calls made so far, against `RunOptions::max_tool_calls`.
    #[serde(default)]
    pub(crate) tool_calls: usize,
    /// A hook's termination of the interrupted step, applied when the step is judged whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) terminated: Option<String>,
    /// The interrupted step's request and answer, for the step finished on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) step: Option<StepHead>,
    /// The references the run's tools recorded, by the number the model cites them by.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(crate) references: std::collections::BTreeMap<usize, crate::citations::Reference>,
    /// How many reference numbers were given out (some may have been recorded nowhere).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) reference_count: usize,
    /// HMAC-SHA256 of the rest, by the agent's state key
    /// ([`AgentBuilder::state_key`](crate::AgentBuilder::state_key)), hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seal: Option<String>,
}

/// The key that seals a run's state, so that a state edited where it waited is refused. Its
/// `Debug` hides it.
#[derive(Clone)]
pub(crate) struct StateKey(pub(crate) Arc<[u8]>);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(<hidden>)")
    }
}

impl StateKey {
    /// The seal of `state` (its seal left out): HMAC-SHA256 over its JSON with object keys
    /// sorted, so that a state read back and written again seals the same.
    pub(crate) fn seal(&self, state: &RunState) -> String {
        use hmac::{Hmac, KeyInit, Mac};
        // A state that cannot be written as JSON gets no seal, and so never verifies.
        let Ok(mut value) = serde_json::to_value(state) else {
            return String::new();
        };
        if let Value::Object(map) = &mut value {
            map.remove("seal");
        }
        let text = tool_core::canonical_json(&value);
        let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(&self.0) else {
            // HMAC takes a key of any length: never reached.
            return String::new();
        };
        mac.update(text.as_bytes());
        mac.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `state` carries this key's seal, compared in constant time.
    pub(crate) fn verifies(&self, state: &RunState) -> bool {
        let Some(given) = state.seal.as_deref() else {
            return false;
        };
        let expected = self.seal(state);
        !expected.is_empty()
            && given.len() == expected.len()
            && std::hint::black_box(
                given
                    .bytes()
                    .zip(expected.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b)),
            ) == 0
    }
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// What a step's request and answer were, kept across an interruption.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct StepHead {
    pub tool_choice: crate::ToolChoice,
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// How long the model took, in milliseconds.
    #[serde(default)]
    pub model_ms: u64,
    /// How long the calls that ran before the interruption took, in milliseconds.
    #[serde(default)]
    pub tools_ms: u64,
}

impl RunState {
    /// The calls that wait for a decision.
    pub fn pending(&self) -> impl Iterator<Item = &PendingApproval> {
        self.pending.iter().map(|(_, p)| p)
    }
}

/// An interrupted run: the calls that wait, and the state to resume from.
#[derive(Debug, Clone)]
pub struct Interruption {
    /// The calls that wait for a decision, in call order.
    pub pending: Vec<PendingApproval>,
    /// What [`Agent::resume`](crate::Agent::resume) takes back.
    pub state: RunState,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_hash_ignores_key_order_and_sees_every_value() {
        let a = PendingApproval::new(
            ToolCall::new("c", "pay", json!({ "to": "bob", "amount": 5 })),
            false,
        );
        let b = PendingApproval::new(
            ToolCall::new("c", "pay", json!({ "amount": 5, "to": "bob" })),
            false,
        );
        let c = PendingApproval::new(
            ToolCall::new("c", "pay", json!({ "amount": 500, "to": "bob" })),
            false,
        );
        assert_eq!(a.arguments_hash, b.arguments_hash);
        assert_ne!(a.arguments_hash, c.arguments_hash);
        assert_eq!(a.arguments_hash.len(), 16);
    }

    #[test]
    fn a_decision_is_bound_to_the_call_id_and_hash() {
        let pending =
            PendingApproval::new(ToolCall::new("c7", "pay", json!({ "amount": 5 })), false);
        let decision = pending.reject("too much");
        assert_eq!(decision.call_id, "c7");
        assert_eq!(decision.arguments_hash, pending.arguments_hash);
        assert_eq!(decision.verdict, ApprovalVerdict::Reject("too much".into()));
    }
}
