//! Tokio timers made without panicking. Tokio panics when a timer is made outside a runtime or
//! on one built without its time driver, and has no way to ask first: such a runtime is the
//! caller's mistake, and it becomes an error that says so rather than a panic at the first 429.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Why no timer could be made.
const NO_TIMER: &str = "the agent needs tokio's time driver here; build the runtime with \
                        `enable_time()` or `enable_all()`";

/// `tokio::time::sleep(wait)`, or why it cannot be had here.
pub fn sleep(wait: Duration) -> Result<tokio::time::Sleep, String> {
    made(|| tokio::time::sleep(wait))
}

/// `tokio::time::timeout(limit, future)`, or why it cannot be had here.
pub fn timeout<F: Future>(limit: Duration, future: F) -> Result<tokio::time::Timeout<F>, String> {
    made(|| tokio::time::timeout(limit, future))
}

fn made<T>(make: impl FnOnce() -> T) -> Result<T, String> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(NO_TIMER.to_owned());
    }
    catch_unwind(AssertUnwindSafe(make)).map_err(|_| NO_TIMER.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_without_its_time_driver_is_an_error_not_a_panic() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let err = runtime.block_on(async { sleep(Duration::from_millis(1)).map(drop) });
        assert!(err.unwrap_err().contains("enable_time"));
        assert!(
            sleep(Duration::from_millis(1)).is_err(),
            "outside a runtime"
        );
        let timed = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        assert!(
            timed.block_on(async { timeout(Duration::from_secs(1), async { 7 }).unwrap().await })
                == Ok(7)
        );
    }
}
