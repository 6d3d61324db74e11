//! Tool call ids as an API takes them: Converse and Anthropic refuse an id with characters
//! outside their set, or none at all, which a transcript from another API's model may have
//! (Gemini's calls often come without ids, a Chat-compatible server's as `functions.add:0`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};

use tool_model::message::Message;

/// The longest id written.
const MAX_LEN: usize = 64;

/// An API's tool call ids (1 to 64 of the characters it takes, each used once): a call's own
/// id with any other character as `_`, made unique if that repeats another; for a call without
/// an id, `call_N`, given to the results without an id that follow, in order, within its turn.
pub(crate) struct ToolUseIds {
    /// Whether the API takes a character in an id.
    takes: fn(char) -> bool,
    /// The id last written for each call id.
    written: HashMap<String, String>,
    /// The ids written for this turn's calls, by call id, in order: two calls of one answer
    /// with the same id are answered in order.
    this_turn: HashMap<String, VecDeque<String>>,
    used: HashSet<String>,
    /// The ids made for this turn's calls without one, not yet given to a result.
    unanswered: VecDeque<String>,
    made: usize,
}

impl ToolUseIds {
    /// Ids of the characters `takes` accepts.
    pub(crate) fn new(takes: fn(char) -> bool) -> Self {
        ToolUseIds {
            takes,
            written: HashMap::new(),
            this_turn: HashMap::new(),
            used: HashSet::new(),
            unanswered: VecDeque::new(),
            made: 0,
        }
    }

    /// A new assistant turn: ids made for calls before it are no longer given to results.
    pub(crate) fn new_turn(&mut self) {
        self.unanswered.clear();
        self.this_turn.clear();
    }

    /// The id written for a call with this id (or none): each call's its own, also when a
    /// server gives every turn's call the same id; the results after it find it.
    pub(crate) fn of_call(&mut self, id: Option<&str>) -> String {
        match id.filter(|id| !id.is_empty()) {
            Some(id) => {
                let written = self.unique(&self.clean(id));
                self.written.insert(id.to_owned(), written.clone());
                self.this_turn
                    .entry(id.to_owned())
                    .or_default()
                    .push_back(written.clone());
                written
            }
            None => {
                let written = self.made_id();
                self.unanswered.push_back(written.clone());
                written
            }
        }
    }

    /// The id written for a result of the call with this id (or none).
    pub(crate) fn of_result(&mut self, id: Option<&str>) -> String {
        match id.filter(|id| !id.is_empty()) {
            Some(id) => match self.this_turn.get_mut(id) {
                // The first of two calls with this id takes the first result.
                Some(queue) if queue.len() > 1 => queue.pop_front().unwrap_or_default(),
                Some(queue) => queue.front().cloned().unwrap_or_default(),
                None => match self.written.get(id) {
                    Some(written) => written.clone(),
                    None => self.clean(id),
                },
            },
            None => match self.unanswered.pop_front() {
                Some(written) => written,
                None => self.made_id(),
            },
        }
    }

    fn made_id(&mut self) -> String {
        self.made += 1;
        self.unique(&format!("call_{}", self.made))
    }

    /// `id`, or with `_2`, `_3`... when it is taken.
    fn unique(&mut self, id: &str) -> String {
        let mut candidate = id.to_owned();
        let mut n = 1;
        while self.used.contains(&candidate) {
            n += 1;
            let suffix = format!("_{n}");
            let kept: String = id.chars().take(MAX_LEN - suffix.len()).collect();
            candidate = format!("{kept}{suffix}");
        }
        self.used.insert(candidate.clone());
        candidate
    }

    /// An id with every character the API does not take as `_`, at most 64 of them.
    fn clean(&self, id: &str) -> String {
        let takes = self.takes;
        id.chars()
            .map(|c| if takes(c) { c } else { '_' })
            .take(MAX_LEN)
            .collect()
    }
}

/// The id of call `call` of message `message`: its own, or, when it has none, one made from
/// where it stands, `made_call_M_C`. For the APIs that take any id but need one on every call
/// (Chat Completions and Responses), whose clients render each message once per run: an id
/// made from positions is the same in every request.
pub(crate) fn call_id_at(messages: &[Message], message: usize, call: usize) -> Cow<'_, str> {
    match messages.get(message) {
        Some(Message::Assistant { calls, .. }) => match calls.get(call) {
            Some(c) if !lacks(c.id.as_deref()) => {
                Cow::Borrowed(c.id.as_deref().unwrap_or_default())
            }
            _ => Cow::Owned(made_call_id(message, call)),
        },
        _ => Cow::Owned(made_call_id(message, call)),
    }
}

/// The call id of the result at `index`: its own, or, when it has none, the id
/// [`call_id_at`] made for the call it answers: the first result without an id after an
/// answer answers that answer's first call without an id, and so on, as the loop writes them.
pub(crate) fn result_id_at(messages: &[Message], index: usize) -> Cow<'_, str> {
    if let Some(Message::Tool {
        call_id: Some(id), ..
    }) = messages.get(index)
    {
        if !id.is_empty() {
            return Cow::Borrowed(id);
        }
    }
    let mut earlier = 0;
    for at in (0..index.min(messages.len())).rev() {
        match &messages[at] {
            Message::Tool { call_id, .. } => earlier += usize::from(lacks(call_id.as_deref())),
            Message::Reasoning(_) => {}
            Message::Assistant { calls, .. } => {
                let answered = calls
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| lacks(c.id.as_deref()))
                    .nth(earlier);
                if let Some((call, _)) = answered {
                    return Cow::Owned(made_call_id(at, call));
                }
                break;
            }
            Message::User { .. } => break,
        }
    }
    // More results without ids than calls without ids: an id that answers none, which the
    // API names in its refusal.
    Cow::Owned(format!("made_result_{index}"))
}

/// Whether this is no id at all (an empty one counts as none).
fn lacks(id: Option<&str>) -> bool {
    id.is_none_or(str::is_empty)
}

fn made_call_id(message: usize, call: usize) -> String {
    format!("made_call_{message}_{call}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_core::ToolCall;

    fn call(id: Option<&str>) -> ToolCall {
        ToolCall {
            id: id.map(str::to_owned),
            name: "add".into(),
            arguments: json!({}),
        }
    }

    fn result(id: Option<&str>) -> Message {
        Message::Tool {
            call_id: id.map(str::to_owned),
            name: "add".into(),
            text: "1".into(),
            is_error: false,
            attachments: Vec::new(),
            found_tools: Vec::new(),
        }
    }

    #[test]
    fn calls_without_ids_get_ids_from_their_place_which_their_results_find() {
        let messages = vec![
            Message::user("add"),
            Message::Assistant {
                text: None,
                calls: vec![call(None), call(Some("c1")), call(Some(""))],
            },
            result(None),
            result(Some("c1")),
            result(Some("")),
            Message::Assistant {
                text: None,
                calls: vec![call(None)],
            },
            result(None),
            result(None),
        ];
        assert_eq!(call_id_at(&messages, 1, 0), "made_call_1_0");
        assert_eq!(call_id_at(&messages, 1, 1), "c1");
        assert_eq!(call_id_at(&messages, 1, 2), "made_call_1_2");
        assert_eq!(result_id_at(&messages, 2), "made_call_1_0");
        assert_eq!(result_id_at(&messages, 3), "c1");
        assert_eq!(result_id_at(&messages, 4), "made_call_1_2");
        assert_eq!(call_id_at(&messages, 5, 0), "made_call_5_0");
        assert_eq!(result_id_at(&messages, 6), "made_call_5_0");
        // One result too many answers no call.
        assert_eq!(result_id_at(&messages, 7), "made_result_7");
    }

    fn anthropic(c: char) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
    }

    #[test]
    fn each_call_has_an_id_of_its_own_which_its_results_find() {
        let mut ids = ToolUseIds::new(anthropic);
        // A server that gives every turn's call the same id.
        let first = ids.of_call(Some("call_0"));
        assert_eq!(ids.of_result(Some("call_0")), first);
        ids.new_turn();
        let second = ids.of_call(Some("call_0"));
        assert_ne!(first, second);
        assert_eq!(ids.of_result(Some("call_0")), second);
        // Calls without ids, answered in order.
        ids.new_turn();
        let (a, b) = (ids.of_call(None), ids.of_call(None));
        assert_eq!((ids.of_result(None), ids.of_result(None)), (a, b));
        assert_eq!(ids.of_call(Some("functions.add:0")), "functions_add_0");
    }

    #[test]
    fn two_calls_of_one_answer_with_the_same_id_take_their_results_in_order() {
        let mut ids = ToolUseIds::new(anthropic);
        let (first, second) = (ids.of_call(Some("d")), ids.of_call(Some("d")));
        assert_ne!(first, second);
        assert_eq!(ids.of_result(Some("d")), first);
        assert_eq!(ids.of_result(Some("d")), second);
        // The next turn's call with that id has its own again.
        ids.new_turn();
        let third = ids.of_call(Some("d"));
        assert!(third != first && third != second);
        assert_eq!(ids.of_result(Some("d")), third);
    }
}
