//! The guard against a model repeating one call: the same tool with the same arguments, in a
//! row, across steps.

use serde::{Deserialize, Serialize};
use tool_core::ToolCall;

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Run it.
    Run,
    /// It is the `limit`th identical call in a row: warn the model instead of running it.
    Warn { times: usize },
    /// One more after the warning: stop the run.
    Stop { times: usize },
    /// Another call of the same response stops the run: not run.
    Skip,
    /// The run's limit of tool calls is reached: not run.
    OverLimit { limit: usize },
}

/// Counts identical calls in a row.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RepeatGuard {
    /// The last call's [`fingerprint`]: short, and text any store takes (a `RunState` is kept
    /// as JSON, and PostgreSQL's `jsonb` refuses the `\u0000` its key holds).
    last: Option<String>,
    times: usize,
}

impl RepeatGuard {
    /// The verdict on the next call, with `limit` identical calls in a row allowed to warn
    /// (0: never).
    pub(crate) fn check(&mut self, call: &ToolCall, limit: usize) -> Verdict {
        let key = fingerprint(call);
        if self.last.as_ref() == Some(&key) {
            self.times = self.times.saturating_add(1);
        } else {
            self.last = Some(key);
            self.times = 1;
        }
        match self.times {
            _ if limit == 0 => Verdict::Run,
            times if times < limit => Verdict::Run,
            times if times == limit => Verdict::Warn { times },
            times => Verdict::Stop { times },
        }
    }
}

/// A call's identity: its name and its arguments with object keys sorted, so that `{"a":1,
/// "b":2}` and `{"b":2,"a":1}` are one call.
pub(crate) fn key(call: &ToolCall) -> String {
    let mut key = call.name.clone();
    key.push('\0');
    // Arguments sent as JSON text that did not parse are compared as the text.
    tool_core::write_canonical_json(&call.arguments, &mut key);
    key
}

/// FNV-1a (64 bits) of a call's [`key`], in hex.
pub(crate) fn fingerprint(call: &ToolCall) -> String {
    fnv1a(&key(call))
}

/// FNV-1a (64 bits) of `text`, in hex: stable across processes and versions.
pub(crate) fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn call(arguments: Value) -> ToolCall {
        ToolCall::new("id", "search", arguments)
    }

    #[test]
    fn key_order_does_not_make_calls_different() {
        assert_eq!(
            key(&call(json!({ "a": 1, "b": { "y": [1, 2], "x": null } }))),
            key(&call(json!({ "b": { "x": null, "y": [1, 2] }, "a": 1 })))
        );
        assert_ne!(key(&call(json!({ "a": 1 }))), key(&call(json!({ "a": 2 }))));
    }

    #[test]
    fn warns_at_the_limit_then_stops_and_another_call_resets_the_count() {
        let mut guard = RepeatGuard::default();
        let same = call(json!({ "q": "x" }));
        assert_eq!(guard.check(&same, 3), Verdict::Run);
        assert_eq!(guard.check(&same, 3), Verdict::Run);
        assert_eq!(guard.check(&same, 3), Verdict::Warn { times: 3 });
        assert_eq!(guard.check(&same, 3), Verdict::Stop { times: 4 });
        assert_eq!(guard.check(&call(json!({ "q": "y" })), 3), Verdict::Run);
        assert_eq!(guard.check(&same, 3), Verdict::Run);
        assert_eq!(guard.check(&same, 0), Verdict::Run);
    }
}
