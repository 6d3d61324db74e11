//! A value fetched when it is needed and kept until shortly before it expires: the cloud
//! credentials and access tokens the clients sign with, fetched by one request at a time.

use std::future::Future;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use tool_model::ModelError;

/// A value kept until it expires within `window`, then fetched again.
///
/// While the value is still good, a request that finds another fetching keeps it rather than
/// waiting, and so does one that comes less than `retry_after` after a try, unless the value
/// expires within `retry_after` (a source that keeps giving a value near its end is not asked
/// at every request, and a value in its last moments is not served when a new one may be had);
/// a failed fetch keeps the value too (logged). Once it has expired, requests wait for one
/// fetch and share its result, a failure included.
pub(crate) struct Refreshing<T> {
    /// Fetched again once it expires within this.
    window: Duration,
    /// While the value is still good, how long after a try the next one waits.
    retry_after: Duration,
    state: std::sync::Mutex<State<T>>,
    /// Held by the request that fetches.
    fetching: tokio::sync::Mutex<()>,
}

struct State<T> {
    /// The value last fetched, and when it expires (`None`: never).
    value: Option<(T, Option<SystemTime>)>,
    /// When the last fetch ended, and its error if it failed.
    last_try: Option<(Instant, Option<ModelError>)>,
}

impl<T: Clone> Refreshing<T> {
    pub(crate) fn new(window: Duration, retry_after: Duration) -> Self {
        Refreshing {
            window,
            retry_after,
            state: std::sync::Mutex::new(State {
                value: None,
                last_try: None,
            }),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The value: the one kept, or a new one from `fetch` (the value and when it expires).
    /// `what` names it in the warning of a failed fetch that kept the current one.
    pub(crate) async fn get<F, Fut>(&self, what: &str, fetch: F) -> Result<T, ModelError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(T, Option<SystemTime>), ModelError>>,
    {
        if let Some((value, left)) = self.current() {
            let Some(left) = left.filter(|left| *left <= self.window) else {
                return Ok(value);
            };
            let Ok(_fetching) = self.fetching.try_lock() else {
                return Ok(value);
            };
            let tried_recently = (self.state().last_try.as_ref())
                .is_some_and(|(at, _)| at.elapsed() < self.retry_after);
            if tried_recently && left > self.retry_after {
                return Ok(value);
            }
            return match self.refresh(fetch).await {
                Ok(new) => Ok(new),
                Err(error) => {
                    tracing::warn!("{what} not refreshed, the current one kept: {error}");
                    Ok(value)
                }
            };
        }
        let waited_from = Instant::now();
        let _fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited: its result is this one's.
        if let Some((value, _)) = self.current() {
            return Ok(value);
        }
        if let Some((ended, Some(error))) = &self.state().last_try {
            if *ended >= waited_from {
                return Err(error.clone());
            }
        }
        self.refresh(fetch).await
    }

    /// The value kept, unless it has expired, and how long it has left (`None`: for ever).
    fn current(&self) -> Option<(T, Option<Duration>)> {
        let state = self.state();
        let (value, expires) = state.value.as_ref()?;
        let Some(expires) = expires else {
            return Some((value.clone(), None));
        };
        let left = expires.duration_since(SystemTime::now()).ok()?;
        Some((value.clone(), Some(left)))
    }

    /// Fetches the value and keeps it, or notes the failure.
    async fn refresh<F, Fut>(&self, fetch: F) -> Result<T, ModelError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(T, Option<SystemTime>), ModelError>>,
    {
        let fetched = fetch().await;
        let mut state = self.state();
        state.last_try = Some((Instant::now(), fetched.as_ref().err().cloned()));
        let (value, expires) = fetched?;
        state.value = Some((value.clone(), expires));
        Ok(value)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Holds `value`, as if fetched by a try that ended at `tried` (for tests).
    #[cfg(test)]
    pub(crate) fn hold(&self, value: T, expires: Option<SystemTime>, tried: Option<Instant>) {
        let mut state = self.state();
        state.value = Some((value, expires));
        state.last_try = tried.map(|at| (at, None));
    }

    /// Whether the last try failed (for tests).
    #[cfg(test)]
    pub(crate) fn last_try_failed(&self) -> bool {
        matches!(&self.state().last_try, Some((_, Some(_))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    const WINDOW: Duration = Duration::from_secs(300);
    const RETRY: Duration = Duration::from_secs(60);

    /// A fetch that gives `value`, good for `lifetime`, or fails when `value` is `None`; and
    /// counts itself.
    fn fetch(
        asked: &Arc<AtomicUsize>,
        value: Option<&'static str>,
        lifetime: Duration,
    ) -> impl Future<Output = Result<(&'static str, Option<SystemTime>), ModelError>> {
        asked.fetch_add(1, Ordering::SeqCst);
        async move {
            match value {
                Some(v) => Ok((v, Some(SystemTime::now() + lifetime))),
                None => Err(ModelError::Setup("down".into())),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_value_is_kept_until_the_window_then_a_failed_fetch_keeps_it_a_minute() {
        let kept: Refreshing<&str> = Refreshing::new(WINDOW, RETRY);
        let asked = Arc::new(AtomicUsize::new(0));
        let first = kept.get("v", || fetch(&asked, Some("a"), WINDOW * 2)).await;
        assert_eq!(first.unwrap(), "a");
        // Fresh: kept.
        let again = kept.get("v", || fetch(&asked, Some("b"), WINDOW * 2)).await;
        assert_eq!(again.unwrap(), "a");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        // Within the window, a minute after the last try: fetched, failed, kept.
        kept.hold("a", Some(SystemTime::now() + WINDOW / 2), None);
        let failed = kept.get("v", || fetch(&asked, None, WINDOW)).await;
        assert_eq!(failed.unwrap(), "a");
        assert!(kept.last_try_failed());
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        // Tried less than a minute ago: not tried again.
        let kept_again = kept.get("v", || fetch(&asked, Some("c"), WINDOW)).await;
        assert_eq!(kept_again.unwrap(), "a");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        tokio::time::advance(RETRY + Duration::from_secs(1)).await;
        let renewed = kept.get("v", || fetch(&asked, Some("c"), WINDOW * 2)).await;
        assert_eq!(renewed.unwrap(), "c");
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_value_is_not_served_and_waiting_requests_share_a_failure() {
        let kept: Refreshing<&str> = Refreshing::new(WINDOW, RETRY);
        kept.hold(
            "old",
            Some(SystemTime::now() - Duration::from_secs(1)),
            None,
        );
        let asked = Arc::new(AtomicUsize::new(0));
        let slow_failure = || {
            asked.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Err::<(&str, Option<SystemTime>), _>(ModelError::Setup("down".into()))
            }
        };
        let (a, b, c) = tokio::join!(
            kept.get("v", slow_failure),
            kept.get("v", slow_failure),
            kept.get("v", slow_failure)
        );
        for result in [a, b, c] {
            assert!(result.unwrap_err().to_string().contains("down"));
        }
        assert_eq!(asked.load(Ordering::SeqCst), 1, "one fetch for the three");
    }

    #[tokio::test(start_paused = true)]
    async fn a_value_in_its_last_minute_is_fetched_again_even_just_after_a_try() {
        let kept: Refreshing<&str> = Refreshing::new(WINDOW, RETRY);
        let asked = Arc::new(AtomicUsize::new(0));
        // A source that gives a value with half a minute left.
        let short = kept.get("v", || fetch(&asked, Some("a"), RETRY / 2)).await;
        assert_eq!(short.unwrap(), "a");
        let next = kept.get("v", || fetch(&asked, Some("b"), WINDOW * 2)).await;
        assert_eq!(next.unwrap(), "b");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_value_that_never_expires_is_fetched_once() {
        let kept: Refreshing<&str> = Refreshing::new(WINDOW, RETRY);
        let asked = Arc::new(AtomicUsize::new(0));
        let forever = || {
            asked.fetch_add(1, Ordering::SeqCst);
            async { Ok(("static", None)) }
        };
        assert_eq!(kept.get("v", forever).await.unwrap(), "static");
        assert_eq!(kept.get("v", forever).await.unwrap(), "static");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }
}
