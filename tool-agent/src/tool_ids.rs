//! Tool call ids as an API takes them: Converse and Anthropic refuse an id with characters
//! outside their set, or none at all, which a transcript from another API's model may have
//! (Gemini's calls often come without ids, a Chat-compatible server's as `functions.add:0`).

use std::collections::{HashMap, HashSet, VecDeque};

/// The longest id written.
const MAX_LEN: usize = 64;

/// An API's tool call ids (1 to 64 of the characters it takes, each used once): a call's own
/// id with any other character as `_`, made unique if that repeats another; for a call without
/// an id, `call_N`, given to the results without an id that follow, in order, within its turn.
pub(crate) struct ToolUseIds {
    /// Whether the API takes a character in an id.
    takes: fn(char) -> bool,
    /// The id written for each call id.
    written: HashMap<String, String>,
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
            used: HashSet::new(),
            unanswered: VecDeque::new(),
            made: 0,
        }
    }

    /// A new assistant turn: ids made for calls before it are no longer given to results.
    pub(crate) fn new_turn(&mut self) {
        self.unanswered.clear();
    }

    /// The id written for a call with this id (or none): each call's its own, also when a
    /// server gives every turn's call the same id; the results after it find it.
    pub(crate) fn of_call(&mut self, id: Option<&str>) -> String {
        match id.filter(|id| !id.is_empty()) {
            Some(id) => {
                let written = self.unique(&self.clean(id));
                self.written.insert(id.to_owned(), written.clone());
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
            Some(id) => match self.written.get(id) {
                Some(written) => written.clone(),
                None => self.clean(id),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
