//! Each tool's retry budget in a run: calls in a row that came back with invalid arguments or
//! [`ToolError::Retry`], against the tool's `max_retries` or the run's
//! ([`RunOptions::max_retries`](crate::RunOptions::max_retries)).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tool_core::{ToolError, ToolOutput};

/// The failed attempts in a row of each tool of one run.
#[derive(Debug, Default)]
pub(crate) struct Retries {
    in_a_row: Mutex<HashMap<String, usize>>,
}

impl Retries {
    /// The text answering a call of `tool` past its budget of `max` retries, or `None` when
    /// it may run.
    pub(crate) fn refusal(&self, tool: &str, max: usize) -> Option<String> {
        let in_a_row = self.lock().get(tool).copied().unwrap_or(0);
        (in_a_row > max).then(|| {
            format!(
                "Not run: `{tool}` refused its arguments {in_a_row} times in a row in this \
                 conversation, past its retry limit (max_retries = {max}). Answer without it, \
                 or ask the user for what is missing."
            )
        })
    }

    /// Counts the result of a call of `tool` that ran: one more for invalid arguments or a
    /// retry asked, none again for a success; other failures leave the count as it is.
    pub(crate) fn record(&self, tool: &str, result: &Result<ToolOutput, ToolError>) {
        let mut in_a_row = self.lock();
        match result {
            Err(ToolError::InvalidArguments { .. } | ToolError::Retry { .. }) => {
                let count = in_a_row.entry(tool.to_owned()).or_insert(0);
                *count = count.saturating_add(1);
            }
            Ok(output) if !output.is_error => {
                in_a_row.remove(tool);
            }
            _ => {}
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.in_a_row.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_past_its_budget_is_refused_and_a_success_starts_again() {
        let retries = Retries::default();
        let invalid = Err(ToolError::InvalidArguments {
            tool: "book".into(),
            violations: Vec::new(),
        });
        let asked = Err(ToolError::retry("book", "the date is past"));
        let failed = Err(ToolError::failed("book", "down"));
        retries.record("book", &invalid);
        retries.record("book", &failed);
        assert_eq!(retries.refusal("book", 1), None, "1 in a row, 1 allowed");
        retries.record("book", &asked);
        let refusal = retries.refusal("book", 1).unwrap();
        assert!(refusal.contains("2 times in a row") && refusal.contains("(max_retries = 1)"));
        assert_eq!(retries.refusal("other", 0), None);
        retries.record("book", &Ok(ToolOutput::text("booked")));
        assert_eq!(retries.refusal("book", 0), None);
    }
}
