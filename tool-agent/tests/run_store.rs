//! Interrupted runs waiting in a store: saved, listed, taken exactly once, expired; in memory
//! and in a real PostgreSQL (started by `scripts/test.sh`, URL in `AI_TOOL_PG_URL`), where two
//! stores (two replicas) race for the same run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tool_agent::{
    Agent, MemoryRunStore, ModelResponse, RunId, RunOptions, RunState, RunStore, RunStoreError,
    RunStoreLimits, ScriptedModel, StopReason,
};
use tool_core::{SafetyHints, ToolMetadata, ToolOutput};
use tool_runtime::DynamicTool;
use tool_test_support::*;

/// A destructive `pay`, counting its runs.
fn pay(paid: Arc<AtomicUsize>) -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": { "to": { "type": "string" } },
        "required": ["to"]
    });
    DynamicTool::new("pay", "Pays someone", schema, move |_, _| {
        paid.fetch_add(1, Ordering::SeqCst);
        async move { Ok(ToolOutput::text("paid")) }
    })
    .with_metadata(ToolMetadata {
        hints: SafetyHints {
            destructive: Some(true),
            ..SafetyHints::default()
        },
        ..ToolMetadata::default()
    })
}

/// An agent whose model calls `pay`, then answers "Done."; and the count of payments.
fn agent() -> (Agent, Arc<AtomicUsize>) {
    let paid = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "pay",
            json!({ "to": "bob" }),
        )]))
        .then(ModelResponse::answer("Done."));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .build();
    (agent, paid)
}

async fn interrupted(agent: &Agent) -> RunState {
    let first = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    assert_eq!(first.stop, StopReason::Interrupted);
    first.interruption.unwrap().state
}

const DAY: Duration = Duration::from_secs(86_400);

/// What every store does, whatever holds its runs.
async fn a_run_waits_and_is_taken_once(store: &dyn RunStore, owner: &str) {
    let (agent, paid) = agent();
    let state = interrupted(&agent).await;
    let id = store.save(owner, &state, DAY).await.unwrap();
    assert_eq!(id.as_str().len(), 32, "128 bits in hex: {id}");

    let waiting = store.pending(owner).await.unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].id, id);
    assert_eq!(waiting[0].pending[0].call.name, "pay");
    assert!(waiting[0].expires_at > waiting[0].saved_at);
    let someone_else = format!("{owner}-other");
    assert!(store.pending(&someone_else).await.unwrap().is_empty());

    // Another owner cannot take it, nor learn that it exists.
    match store.take(&someone_else, &id).await {
        Err(RunStoreError::NotFound(found)) => assert_eq!(found, id),
        other => panic!("another owner's take: {other:?}"),
    }
    let state = store.take(owner, &id).await.unwrap();
    match store.take(owner, &id).await {
        Err(RunStoreError::Taken(taken)) => assert_eq!(taken, id),
        other => panic!("a second take: {other:?}"),
    }
    assert!(store.pending(owner).await.unwrap().is_empty());
    assert!(matches!(
        store.take(owner, &RunId::new("no such run")).await,
        Err(RunStoreError::NotFound(_))
    ));

    // The state taken resumes the run: the payment approved runs once.
    let decisions: Vec<_> = state.pending().map(|p| p.approve()).collect();
    let result = agent
        .resume(state, &decisions, &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Done.");
    assert_eq!(paid.load(Ordering::SeqCst), 1);
}

/// A run not taken in its time is gone, and purged.
async fn a_run_expires(store: &dyn RunStore, owner: &str) {
    let (agent, _) = agent();
    let state = interrupted(&agent).await;
    let id = store
        .save(owner, &state, Duration::from_millis(50))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(store.pending(owner).await.unwrap().is_empty());
    match store.take(owner, &id).await {
        Err(RunStoreError::Expired(expired)) => assert_eq!(expired, id),
        other => panic!("an expired take: {other:?}"),
    }
    let kept = store.save(owner, &state, DAY).await.unwrap();
    store
        .save(owner, &state, Duration::from_millis(50))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(store.purge_expired().await.unwrap() >= 1);
    assert!(store.take(owner, &kept).await.is_ok());
}

/// Each limit refuses, naming itself.
async fn the_limits_hold(store: &dyn RunStore, owner: &str) {
    let (agent, _) = agent();
    let state = interrupted(&agent).await;
    for _ in 0..2 {
        store.save(owner, &state, DAY).await.unwrap();
    }
    let refused = store.save(owner, &state, DAY).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("RunStoreLimits::max_runs_per_owner"),
        "{refused}"
    );
    let other = format!("{owner}-2");
    let refused = store.save(&other, &state, DAY).await.unwrap_err();
    assert!(
        refused.to_string().contains("RunStoreLimits::max_runs"),
        "{refused}"
    );
    for ttl in [Duration::ZERO, DAY * 2] {
        let refused = store.save(&other, &state, ttl).await.unwrap_err();
        assert!(refused.to_string().contains("max_ttl"), "{refused}");
    }
    // Taking one makes room.
    let first = store.pending(owner).await.unwrap()[0].id.clone();
    store.take(owner, &first).await.unwrap();
    store.save(&other, &state, DAY).await.unwrap();
}

fn small_limits() -> RunStoreLimits {
    RunStoreLimits {
        max_runs_per_owner: 2,
        max_runs: 2,
        max_ttl: DAY,
        ..RunStoreLimits::default()
    }
}

#[tokio::test]
async fn in_memory_a_run_waits_and_is_taken_once() {
    a_run_waits_and_is_taken_once(&MemoryRunStore::new(), "ada").await;
}

#[tokio::test]
async fn in_memory_a_run_expires() {
    a_run_expires(&MemoryRunStore::new(), "ada").await;
}

#[tokio::test]
async fn in_memory_the_limits_hold() {
    the_limits_hold(&MemoryRunStore::with_limits(small_limits()), "ada").await;
    // A state larger than the cap is refused whole.
    let (agent, _) = agent();
    let state = interrupted(&agent).await;
    let tiny = MemoryRunStore::with_limits(RunStoreLimits {
        max_state_bytes: 100,
        ..RunStoreLimits::default()
    });
    let refused = tiny.save("ada", &state, DAY).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("RunStoreLimits::max_state_bytes"),
        "{refused}"
    );
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use tool_agent::PgRunStore;
    use tool_postgres::tokio_postgres;

    fn url() -> String {
        std::env::var("AI_TOOL_PG_URL").expect(
            "AI_TOOL_PG_URL: run the tests through scripts/test.sh, which starts PostgreSQL",
        )
    }

    /// A table of this test's own, dropped first should an earlier run have left it.
    async fn table(name: &str) -> String {
        let table = format!("runs_{name}_{}", std::process::id());
        admin()
            .await
            .batch_execute(&format!("DROP TABLE IF EXISTS \"{table}\""))
            .await
            .unwrap();
        table
    }

    async fn admin() -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
    }

    #[tokio::test]
    async fn in_postgres_a_run_waits_and_is_taken_once() {
        let store = PgRunStore::connect(&url(), &table("once").await)
            .await
            .unwrap();
        a_run_waits_and_is_taken_once(&store, "ada").await;
    }

    #[tokio::test]
    async fn in_postgres_a_run_expires() {
        let store = PgRunStore::connect(&url(), &table("expiry").await)
            .await
            .unwrap();
        a_run_expires(&store, "ada").await;
    }

    #[tokio::test]
    async fn in_postgres_the_limits_hold() {
        let store = PgRunStore::connect(&url(), &table("limits").await)
            .await
            .unwrap()
            .with_limits(small_limits());
        the_limits_hold(&store, "ada").await;
    }

    /// Two replicas, each with its own connection, take the same runs at once: each run goes
    /// to exactly one of them; the other is told it was taken.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_replicas_taking_one_run_one_wins() {
        let table = table("race").await;
        let first = Arc::new(PgRunStore::connect(&url(), &table).await.unwrap());
        let second = Arc::new(PgRunStore::connect(&url(), &table).await.unwrap());
        let (agent, _) = agent();
        let state = interrupted(&agent).await;
        let mut ids = Vec::new();
        for _ in 0..40 {
            ids.push(first.save("ada", &state, DAY).await.unwrap());
        }
        let mut races = Vec::new();
        for id in ids {
            for store in [Arc::clone(&first), Arc::clone(&second)] {
                let id = id.clone();
                races.push(tokio::spawn(async move {
                    match store.take("ada", &id).await {
                        Ok(_) => true,
                        Err(RunStoreError::Taken(_)) => false,
                        Err(other) => panic!("a take in a race: {other}"),
                    }
                }));
            }
        }
        let mut won = Vec::new();
        for race in races {
            won.push(race.await.unwrap());
        }
        for pair in won.chunks(2) {
            assert_eq!(pair.iter().filter(|w| **w).count(), 1, "{won:?}");
        }
    }

    /// The store's connection dropped (its backend terminated, as a restart or a failover
    /// does): the next save, list and take connect again and are answered.
    #[tokio::test]
    async fn the_store_connects_again_after_its_connection_drops() {
        let table = table("reconnect").await;
        let name = format!("ai-tool-runs-{}", std::process::id());
        let separator = if url().contains('?') { '&' } else { '?' };
        let tagged = format!("{}{separator}application_name={name}", url());
        let store = PgRunStore::connect(&tagged, &table).await.unwrap();
        let (agent, _) = agent();
        let state = interrupted(&agent).await;
        let id = store.save("ada", &state, DAY).await.unwrap();
        let ended = admin()
            .await
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1",
                &[&name],
            )
            .await
            .unwrap();
        assert_eq!(ended.len(), 1, "the store's one connection was ended");
        assert_eq!(store.pending("ada").await.unwrap().len(), 1);
        store.take("ada", &id).await.unwrap();
        store.save("ada", &state, DAY).await.unwrap();
    }

    /// A password in the connection string never reaches an error or a `Debug`.
    #[tokio::test]
    async fn a_password_never_shows() {
        let error = PgRunStore::connect(
            "postgres://ada:s3cret@127.0.0.1:1/db?connect_timeout=2",
            "runs",
        )
        .await
        .unwrap_err();
        assert!(!error.to_string().contains("s3cret"), "{error}");
        assert!(!format!("{error:?}").contains("s3cret"), "{error:?}");
        let store = PgRunStore::connect(&url(), &table("debug").await)
            .await
            .unwrap();
        assert!(!format!("{store:?}").contains("password="));
    }
}
