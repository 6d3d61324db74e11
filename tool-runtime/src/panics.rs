//! Quiet panics inside tool calls. The executor catches a tool's panic and returns
//! `ToolError::Panicked`, but Rust's panic hook runs before the catch and prints the panic to
//! standard error all the same. [`silence_caught_panics`] installs a hook that stays quiet for
//! panics the executor catches, and prints every other panic as before.

use std::cell::Cell;
use std::sync::Once;

thread_local! {
    /// How many guarded calls this thread is inside of.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`, marked as code whose panics the executor catches.
#[inline]
pub(crate) fn caught<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        #[inline]
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    DEPTH.with(|d| d.set(d.get().saturating_add(1)));
    let _leave = Leave;
    f()
}

/// Whether this thread is running a tool call whose panic the executor will catch. For a panic
/// hook of your own: a panic for which this is true comes back as `ToolError::Panicked`.
pub fn inside_tool_call() -> bool {
    DEPTH.with(Cell::get) > 0
}

/// Installs (once per process) a panic hook that prints nothing for panics the executor
/// catches, and hands every other panic to the hook that was installed before. A caught panic
/// is still reported: as `ToolError::Panicked` to the caller, and as a `tracing` debug event
/// with its message and location.
///
/// ```
/// tool_runtime::silence_caught_panics(); // `ai_tool::silence_caught_panics` in the facade
/// ```
pub fn silence_caught_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if inside_tool_call() {
                tracing::debug!(
                    panic = %info,
                    "a tool panicked; the executor caught it and returns ToolError::Panicked"
                );
            } else {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nested_calls_and_unwinds() {
        assert!(!inside_tool_call());
        caught(|| {
            assert!(inside_tool_call());
            caught(|| assert!(inside_tool_call()));
            assert!(inside_tool_call());
        });
        assert!(!inside_tool_call());
        let _ = std::panic::catch_unwind(|| caught(|| panic!("inside")));
        assert!(
            !inside_tool_call(),
            "the mark is taken off when a panic unwinds through it"
        );
    }
}
