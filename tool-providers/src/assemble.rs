//! Tool calls assembled from streamed deltas, as real servers send them: a call's id and name
//! first and its arguments in pieces, matched by index and by id, including servers that give
//! every parallel call index 0, interleave the pieces of several calls, or repeat a piece.

use std::collections::HashMap;

use serde_json::Value;
use tool_core::provider::Aliases;
use tool_core::ToolCall;

use tool_core::provider::Format;
use tool_model::message::Usage;
use tool_model::{CallDelta, Ending, ModelError, ModelEvent, ModelResponse};

/// How an API's finish reason reads as an [`Ending`].
pub(crate) type EndingOf = fn(Option<&str>) -> Ending;

/// What a streamed answer said so far, as every API's stream decoder keeps it: the text, the
/// calls as they come, the usage and why it ended; the aliases its tools were declared under.
/// The calls grow by [`StreamedAnswer::push_call`] alone, which streams what each delta adds.
#[derive(Debug)]
pub(crate) struct StreamedAnswer {
    aliases: Aliases,
    ending_of: EndingOf,
    pub text: String,
    calls: CallAssembler,
    pub usage: Usage,
    pub finish_reason: Option<String>,
    /// What the model thought, to be sent back with the answer.
    pub reasoning: Option<tool_model::Reasoning>,
}

/// An answer with no API's reading of its finish reason (every answer whole), for decoders
/// whose other fields default: [`StreamedAnswer::new`] gives it the API's.
impl Default for StreamedAnswer {
    fn default() -> Self {
        StreamedAnswer::new(Aliases::default(), |_| Ending::Whole)
    }
}

impl StreamedAnswer {
    /// An answer to come, of tools declared under `aliases`, whose finish reason reads as
    /// `ending_of` says.
    pub(crate) fn new(aliases: Aliases, ending_of: EndingOf) -> Self {
        StreamedAnswer {
            aliases,
            ending_of,
            text: String::new(),
            calls: CallAssembler::default(),
            usage: Usage::default(),
            finish_reason: None,
            reasoning: None,
        }
    }

    /// Adds one delta of a call (see [`CallAssembler::push`]) and streams what it added as a
    /// [`ModelEvent::ToolCallDelta`] with the tool's real name, if it added anything: every
    /// decoder's call deltas are streamed here, alike.
    pub(crate) fn push_call(
        &mut self,
        index: Option<u64>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
        events: &mut Vec<ModelEvent>,
    ) {
        let added = self.calls.push(index, id, name, arguments);
        if added.is_empty() {
            return;
        }
        events.push(ModelEvent::ToolCallDelta(CallDelta::new(
            added.at,
            added.id.map(str::to_owned),
            added.name.map(|n| self.aliases.real_name(n).to_owned()),
            added.arguments,
        )));
    }

    /// The bytes of the calls held so far ([`CallAssembler::bytes`]).
    pub(crate) fn call_bytes(&self) -> usize {
        self.calls.bytes()
    }

    /// The whole answer: the text (none when empty) and the calls assembled.
    pub(crate) fn finish(&mut self) -> ModelResponse {
        let text = std::mem::take(&mut self.text);
        ModelResponse {
            text: (!text.is_empty()).then_some(text),
            calls: std::mem::take(&mut self.calls).finish(&self.aliases),
            usage: self.usage,
            ending: (self.ending_of)(self.finish_reason.as_deref()),
            finish_reason: self.finish_reason.take(),
            reasoning: self.reasoning.take(),
        }
    }
}

/// What a call counts for toward the answer's byte cap besides its id, name and arguments.
const CALL_BYTES: usize = 256;

/// The calls of one streamed answer, as they come. Each delta finds its call in constant
/// time (maps by id and by index, not a scan of the calls so far), so that an answer of
/// thousands of calls costs no more per delta than one of two.
#[derive(Debug, Default)]
pub(crate) struct CallAssembler {
    calls: Vec<Partial>,
    /// The first call with each id.
    by_id: HashMap<String, usize>,
    /// The first call with each id and index (calls of one answer may share an id where the
    /// stream numbers its calls).
    by_id_and_index: HashMap<(String, Option<u64>), usize>,
    /// The last call that said each index.
    last_at_index: HashMap<u64, usize>,
    /// The calls without an id yet, by index, in the order they started.
    unnamed_at_index: HashMap<u64, Vec<usize>>,
    /// The bytes of the ids, names and arguments held.
    bytes: usize,
}

/// What one delta added to the calls ([`CallAssembler::push`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Added<'d> {
    /// The call it belongs to: its position among the calls, in the order they started.
    pub at: usize,
    /// The call's id, when this delta was the first to say it.
    pub id: Option<&'d str>,
    /// The call's name as the API gave it, when this delta was the first to say it.
    pub name: Option<&'d str>,
    /// The piece of the arguments kept (empty when none was, or the piece repeated arguments
    /// already complete).
    pub arguments: &'d str,
}

impl Added<'_> {
    /// Whether the delta added nothing a reader could see.
    pub(crate) fn is_empty(&self) -> bool {
        self.id.is_none() && self.name.is_none() && self.arguments.is_empty()
    }
}

#[derive(Debug, Default)]
struct Partial {
    id: String,
    name: String,
    arguments: String,
}

impl CallAssembler {
    /// Adds one delta: any of the call's position, id, name and a piece of its arguments.
    /// Says what it added: the call's slot, the id and name if they are new to it, and the
    /// piece of the arguments kept.
    pub(crate) fn push<'d>(
        &mut self,
        index: Option<u64>,
        id: Option<&'d str>,
        name: Option<&'d str>,
        arguments: Option<&'d str>,
    ) -> Added<'d> {
        let id = id.filter(|id| !id.is_empty());
        let (at, new_id) = self.slot(index, id);
        let mut added = Added {
            at,
            id: id.filter(|_| new_id),
            name: None,
            arguments: "",
        };
        let call = &mut self.calls[at];
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            // Some servers repeat the name in every delta; it never grows.
            if call.name.is_empty() {
                call.name = name.to_owned();
                self.bytes = self.bytes.saturating_add(name.len());
                added.name = Some(name);
            }
        }
        if let Some(piece) = arguments.filter(|a| !a.is_empty()) {
            if !is_repeat(&call.arguments, piece) {
                call.arguments.push_str(piece);
                self.bytes = self.bytes.saturating_add(piece.len());
                added.arguments = piece;
            }
        }
        added
    }

    /// The bytes of the calls' ids, names and arguments so far: they count toward the
    /// answer's byte cap as its text does.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Which call a delta belongs to, made if new; and whether the call learned its id
    /// `id` from it.
    fn slot(&mut self, index: Option<u64>, id: Option<&str>) -> (usize, bool) {
        if let Some(id) = id {
            // Two calls of one answer may share an id (a server that numbers each answer's
            // calls alike): where the stream numbers its calls, the number tells them apart.
            // The first call with this id whose index is this one's or unsaid.
            let same_call = match index {
                None => self.by_id.get(id).copied(),
                Some(_) => {
                    let at_index = self.by_id_and_index.get(&(id.to_owned(), index));
                    let unsaid = self.by_id_and_index.get(&(id.to_owned(), None));
                    at_index.into_iter().chain(unsaid).min().copied()
                }
            };
            if let Some(at) = same_call {
                return (at, false);
            }
            // The id arriving after the first piece of its call.
            let unnamed = index.and_then(|i| self.unnamed_at_index.get_mut(&i)?.pop());
            if let Some(at) = unnamed {
                self.calls[at].id = id.to_owned();
                self.bytes = self.bytes.saturating_add(id.len());
                self.index_id(id, index, at);
                return (at, true);
            }
            return (self.start(index, id), true);
        }
        let by_index = index.and_then(|i| self.last_at_index.get(&i).copied());
        let at = match by_index {
            Some(at) => at,
            None if index.is_none() && !self.calls.is_empty() => self.calls.len() - 1,
            None => self.start(index, ""),
        };
        (at, false)
    }

    fn start(&mut self, index: Option<u64>, id: &str) -> usize {
        let at = self.calls.len();
        self.calls.push(Partial {
            id: id.to_owned(),
            ..Partial::default()
        });
        // A call costs memory before it has a name or arguments: each counts for some bytes of
        // its own, so that a stream of empty deltas, each a new call, meets the byte cap too.
        self.bytes = self.bytes.saturating_add(CALL_BYTES + id.len());
        if let Some(i) = index {
            self.last_at_index.insert(i, at);
            if id.is_empty() {
                self.unnamed_at_index.entry(i).or_default().push(at);
            }
        }
        if !id.is_empty() {
            self.index_id(id, index, at);
        }
        at
    }

    /// Finds the call at `at` by its id from now on.
    fn index_id(&mut self, id: &str, index: Option<u64>, at: usize) {
        self.by_id.entry(id.to_owned()).or_insert(at);
        self.by_id_and_index
            .entry((id.to_owned(), index))
            .or_insert(at);
    }

    /// The calls, in the order they started, with real names and decoded arguments. Arguments
    /// that are not JSON are kept as text, which validation reports to the model.
    pub(crate) fn finish(self, aliases: &Aliases) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .filter(|c| !c.name.is_empty())
            .map(|c| {
                let name = aliases.real_name(&c.name).to_owned();
                // A custom tool's pieces are its text, not JSON.
                let arguments = if aliases.takes_text(&name) {
                    tool_core::text_input::text_arguments(&c.arguments)
                } else if c.arguments.trim().is_empty() {
                    Value::Object(Default::default())
                } else {
                    serde_json::from_str(&c.arguments).unwrap_or(Value::String(c.arguments))
                };
                ToolCall {
                    id: (!c.id.is_empty()).then_some(c.id),
                    arguments: aliases.decode_arguments(&name, arguments),
                    name,
                }
            })
            .collect()
    }
}

/// Whether `piece` repeats arguments already complete: a server sending the whole arguments
/// again at the end.
fn is_repeat(so_far: &str, piece: &str) -> bool {
    !so_far.is_empty()
        && so_far.trim() == piece.trim()
        && serde_json::from_str::<Value>(so_far).is_ok()
}

/// The calls of a provider's whole answer in `format`: an error the answer reports is a
/// [`ModelError::Status`] with its message, one it cannot be read for a
/// [`ModelError::Malformed`].
pub(crate) fn answer_calls(
    provider: &'static str,
    format: Format,
    answer: &serde_json::Value,
    aliases: &tool_core::provider::Aliases,
) -> Result<Vec<ToolCall>, ModelError> {
    use tool_core::provider::{parse_calls, ParseError};
    parse_calls(format, answer, aliases).map_err(|e| match e {
        ParseError::ProviderError { message, .. } => ModelError::Status {
            provider,
            status: 200,
            message,
            attempts: 1,
        },
        other => ModelError::Malformed {
            provider,
            message: other.to_string(),
        },
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// What a decoder streams for `payloads`, each given as its text, and its answer.
    pub(crate) fn decode(
        mut decoder: Box<dyn crate::sse::Decoder>,
        payloads: &[Value],
    ) -> (Vec<ModelEvent>, ModelResponse) {
        let mut events = Vec::new();
        for payload in payloads {
            decoder.data(&payload.to_string(), &mut events).unwrap();
        }
        (events, decoder.finish())
    }

    /// The calls `events` streamed, by index: each one's id and name, which a call says once
    /// at most, and its arguments' pieces joined.
    pub(crate) fn streamed_calls(events: &[ModelEvent]) -> Vec<(Option<String>, String, String)> {
        let mut calls: Vec<(Option<String>, Option<String>, String)> = Vec::new();
        for event in events {
            let ModelEvent::ToolCallDelta(delta) = event else {
                continue;
            };
            if calls.len() <= delta.index {
                calls.resize(delta.index + 1, Default::default());
            }
            let (id, name, arguments) = &mut calls[delta.index];
            if let Some(said) = &delta.id {
                assert!(
                    id.replace(said.clone()).is_none(),
                    "the id again: {delta:?}"
                );
            }
            if let Some(said) = &delta.name {
                assert!(
                    name.replace(said.clone()).is_none(),
                    "the name again: {delta:?}"
                );
            }
            arguments.push_str(&delta.arguments);
        }
        (calls.into_iter())
            .map(|(id, name, arguments)| (id, name.expect("every call named"), arguments))
            .collect()
    }

    /// Checks that `events` streamed `answer`'s calls, in order: each one's id and name, and
    /// the JSON text its arguments were read from. That text, call by call.
    pub(crate) fn assert_streamed(events: &[ModelEvent], answer: &ModelResponse) -> Vec<String> {
        let streamed = streamed_calls(events);
        assert_eq!(streamed.len(), answer.calls.len(), "{events:?}");
        for ((id, name, arguments), call) in streamed.iter().zip(&answer.calls) {
            assert_eq!((id, name), (&call.id, &call.name));
            let read: Value = serde_json::from_str(arguments).unwrap();
            assert_eq!(read, call.arguments);
        }
        streamed.into_iter().map(|(_, _, a)| a).collect()
    }

    /// The reasoning `events` streamed, piece by piece.
    pub(crate) fn streamed_reasoning(events: &[ModelEvent]) -> Vec<&str> {
        let thought = events.iter().filter_map(|event| match event {
            ModelEvent::ReasoningDelta(thought) => Some(thought.as_str()),
            _ => None,
        });
        thought.collect()
    }

    fn finish(assembler: CallAssembler) -> Vec<(Option<String>, String, Value)> {
        assembler
            .finish(&Aliases::default())
            .into_iter()
            .map(|c| (c.id, c.name, c.arguments))
            .collect()
    }

    #[test]
    fn pieces_join_by_index_in_order() {
        let mut a = CallAssembler::default();
        a.push(Some(0), Some("c1"), Some("add"), Some(""));
        a.push(Some(0), None, None, Some("{\"a\":"));
        a.push(Some(0), None, None, Some(" 1, \"b\": 2}"));
        assert_eq!(
            finish(a),
            [(Some("c1".into()), "add".into(), json!({ "a": 1, "b": 2 }))]
        );
    }

    #[test]
    fn interleaved_parallel_calls_are_kept_apart() {
        let mut a = CallAssembler::default();
        a.push(Some(0), Some("c1"), Some("add"), None);
        a.push(Some(1), Some("c2"), Some("mul"), None);
        a.push(Some(1), None, None, Some("{\"x\":"));
        a.push(Some(0), None, None, Some("{\"a\":"));
        a.push(Some(0), None, None, Some("1}"));
        a.push(Some(1), None, None, Some("2}"));
        assert_eq!(
            finish(a),
            [
                (Some("c1".into()), "add".into(), json!({ "a": 1 })),
                (Some("c2".into()), "mul".into(), json!({ "x": 2 })),
            ]
        );
    }

    #[test]
    fn two_calls_with_one_id_are_told_apart_by_index() {
        let mut a = CallAssembler::default();
        a.push(Some(0), Some("call_0"), Some("add"), Some("{\"a\":1}"));
        a.push(Some(1), Some("call_0"), Some("mul"), Some("{\"x\":"));
        a.push(Some(1), Some("call_0"), None, Some("2}"));
        assert_eq!(
            finish(a),
            [
                (Some("call_0".into()), "add".into(), json!({ "a": 1 })),
                (Some("call_0".into()), "mul".into(), json!({ "x": 2 })),
            ]
        );
    }

    #[test]
    fn calls_that_all_say_index_0_are_told_apart_by_id() {
        let mut a = CallAssembler::default();
        a.push(Some(0), Some("c1"), Some("add"), Some("{\"a\": 1}"));
        a.push(Some(0), Some("c2"), Some("add"), Some("{\"a\":"));
        a.push(Some(0), None, None, Some(" 2}"));
        assert_eq!(
            finish(a),
            [
                (Some("c1".into()), "add".into(), json!({ "a": 1 })),
                (Some("c2".into()), "add".into(), json!({ "a": 2 })),
            ]
        );
    }

    #[test]
    fn repeated_names_and_a_repeated_whole_argument_are_not_doubled() {
        let mut a = CallAssembler::default();
        a.push(Some(0), Some("c1"), Some("add"), Some("{\"a\": 1}"));
        a.push(Some(0), Some("c1"), Some("add"), Some("{\"a\": 1}"));
        assert_eq!(
            finish(a),
            [(Some("c1".into()), "add".into(), json!({ "a": 1 }))]
        );
    }

    #[test]
    fn each_delta_says_what_it_added_once() {
        let mut a = CallAssembler::default();
        let added = |at, id, name, arguments| Added {
            at,
            id,
            name,
            arguments,
        };
        let said = a.push(Some(0), None, Some("add"), Some("{\"a\": 1}"));
        assert_eq!(said, added(0, None, Some("add"), "{\"a\": 1}"));
        // The id arrives late; the name and the whole arguments, repeated, add nothing.
        let said = a.push(Some(0), Some("c1"), Some("add"), Some("{\"a\": 1}"));
        assert_eq!(said, added(0, Some("c1"), None, ""));
        assert!(a.push(Some(0), Some("c1"), None, None).is_empty());
        let said = a.push(Some(1), Some("c2"), Some("mul"), Some(""));
        assert_eq!(said, added(1, Some("c2"), Some("mul"), ""));
        assert!(!said.is_empty());
    }

    #[test]
    fn a_call_delta_streams_with_the_tools_real_name() {
        let aliases = Aliases::for_names(["math.add"], Format::OpenAiChat);
        let alias = aliases.provider_name("math.add").to_owned();
        assert_ne!(alias, "math.add");
        let mut answer = StreamedAnswer::new(aliases, |_| Ending::Whole);
        let mut events = Vec::new();
        answer.push_call(Some(0), Some("c1"), Some(&alias), None, &mut events);
        answer.push_call(Some(0), None, Some(&alias), None, &mut events);
        answer.push_call(Some(0), None, None, Some("{}"), &mut events);
        let delta = |id: Option<&str>, name: Option<&str>, arguments| {
            let (id, name) = (id.map(str::to_owned), name.map(str::to_owned));
            ModelEvent::ToolCallDelta(CallDelta::new(0, id, name, arguments))
        };
        assert_eq!(
            events,
            [
                delta(Some("c1"), Some("math.add"), ""),
                delta(None, None, "{}")
            ]
        );
        assert_eq!(answer.finish().calls[0].name, "math.add");
    }

    #[test]
    fn an_id_arriving_late_joins_its_call_and_bad_json_stays_text() {
        let mut a = CallAssembler::default();
        a.push(Some(0), None, Some("add"), Some("{\"a\": "));
        a.push(Some(0), Some("c9"), None, Some("oops"));
        assert_eq!(
            finish(a),
            [(Some("c9".into()), "add".into(), json!("{\"a\": oops"))]
        );
    }
}
