//! The pgvector store against a real PostgreSQL (started by `scripts/test.sh` through
//! `scripts/postgres.sh`, URL in `AI_TOOL_PG_URL`).
#![cfg(feature = "pgvector")]

use ai_tool::retrieval::pgvector::PgVectorStore;
use ai_tool::retrieval::{EmbedFuture, EmbeddingProvider, InMemoryStore, StoredTool, ToolStore};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Deterministic vectors from the text, counting what it embeds.
struct Hashing {
    embedded: AtomicUsize,
}

const DIMENSION: usize = 16;

impl EmbeddingProvider for Hashing {
    fn model_id(&self) -> &str {
        "test/hashing"
    }
    fn dimension(&self) -> usize {
        DIMENSION
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        Box::pin(async move { Ok(texts.iter().map(|t| vector(t)).collect()) })
    }
}

fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; DIMENSION];
    for (i, word) in text.split_whitespace().enumerate() {
        let h = word.bytes().fold(2166136261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16777619)
        });
        v[(h as usize) % DIMENSION] += 1.0 + (i % 3) as f32 * 0.1;
    }
    v
}

/// A correct top k: the scores of the in-memory store's top k, rank for rank, each given by a tool
/// that truly scores it (in the in-memory store's full ranking). Tools whose scores tie, to float
/// rounding, may come in either order, and either side of the cut.
fn same_ranking(
    from_pg: &[(String, f32)],
    top: &[(String, f32)],
    all: &[(String, f32)],
    query: &str,
) {
    let close = |a: f32, b: f32| (a - b).abs() < 1e-4;
    assert_eq!(from_pg.len(), top.len(), "{query}");
    for ((name, score), (_, expected)) in from_pg.iter().zip(top) {
        let truly = all.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
        assert!(
            close(*score, *expected) && truly.is_some_and(|t| close(t, *score)),
            "{query}: {from_pg:?} against {top:?}"
        );
    }
}

fn url() -> String {
    std::env::var("AI_TOOL_PG_URL")
        .expect("AI_TOOL_PG_URL: run the tests through scripts/test.sh, which starts PostgreSQL")
}

fn tools() -> Vec<StoredTool> {
    let texts = [
        ("weather", "weather forecast rain temperature city"),
        ("flights", "flight airport ticket airline travel"),
        ("currency", "currency exchange rate money convert"),
        ("recipes", "recipe cooking ingredient kitchen meal"),
        ("music", "song music artist album playlist"),
        ("news", "news headline article today world"),
        ("stocks", "stock market price share trading"),
        ("maps", "map route directions city travel"),
    ];
    texts
        .iter()
        .map(|(n, t)| StoredTool::new(*n, *t, "test/hashing"))
        .collect()
}

#[tokio::test]
async fn sync_twice_embeds_once_removes_and_searches_like_the_in_memory_store() {
    let table = format!("tools_test_{}", std::process::id());
    let store = PgVectorStore::connect(&url(), &table, DIMENSION)
        .await
        .unwrap();
    let embedder = Hashing {
        embedded: AtomicUsize::new(0),
    };
    let mut set = tools();

    let first = store.sync(&set, &embedder).await.unwrap();
    assert_eq!((first.embedded, first.removed, first.unchanged), (8, 0, 0));
    let second = store.sync(&set, &embedder).await.unwrap();
    assert_eq!(
        (second.embedded, second.unchanged),
        (0, 8),
        "a second sync embeds nothing"
    );
    assert_eq!(embedder.embedded.load(Ordering::SeqCst), 8);

    set.retain(|t| t.name != "news");
    set[0] = StoredTool::new("weather", "weather forecast storm wind", "test/hashing");
    let third = store.sync(&set, &embedder).await.unwrap();
    assert_eq!((third.embedded, third.removed, third.unchanged), (1, 1, 6));
    let hashes = store.hashes().await.unwrap();
    assert!(!hashes.contains_key("news"), "a removed tool disappears");
    assert_eq!(hashes.len(), 7);

    let memory = InMemoryStore::new();
    memory.sync(&set, &embedder).await.unwrap();
    for query in [
        "travel to the airport",
        "cooking a meal",
        "music playlist",
        "rain in the city",
        "exchange money",
    ] {
        let q = vector(query);
        let from_pg = store.search(&q, 3, None).await.unwrap();
        let top = memory.nearest(&q, 3, None).unwrap();
        let all = memory.nearest(&q, usize::MAX, None).unwrap();
        same_ranking(&from_pg, &top, &all, query);
    }
    let scored = store
        .search(&vector("song music artist album playlist"), 1, Some(0.99))
        .await
        .unwrap();
    assert_eq!(scored[0].0, "music");
    assert!(
        store
            .search(&vector("zzz"), 3, Some(2.0))
            .await
            .unwrap()
            .is_empty(),
        "nothing scores over 2"
    );
}

#[tokio::test]
async fn a_bad_table_name_or_server_is_a_clear_error() {
    let err = PgVectorStore::connect(&url(), "tools; drop table x", DIMENSION)
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("not a plain SQL identifier"),
        "{err}"
    );
    let err = PgVectorStore::connect("postgres://postgres@127.0.0.1:1/postgres", "t", DIMENSION)
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
}

/// A table made for a model of another dimension is refused at connection, naming both.
#[tokio::test]
async fn a_table_of_another_dimension_is_a_clear_error_at_connection() {
    // Past 2,000 dimensions the table has no index: the check comes before one is asked for.
    const UNINDEXED: usize = 2_001;
    let table = "tools_of_another_model";
    let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    client
        .batch_execute(&format!("DROP TABLE IF EXISTS {table}"))
        .await
        .expect("a fresh start");
    let store = PgVectorStore::connect(&url(), table, UNINDEXED)
        .await
        .expect("connects");
    drop(store);
    let err = PgVectorStore::connect(&url(), table, DIMENSION)
        .await
        .err()
        .expect("the dimensions differ");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "`{table}` holds vectors of {} dimensions, not {DIMENSION}",
            UNINDEXED
        )),
        "{text}"
    );
    PgVectorStore::connect(&url(), table, UNINDEXED)
        .await
        .expect("the table's own dimension connects");
}

/// A table made by something else, with `NULL`s where the store writes values: every read names
/// the column and the table, and nothing panics.
#[tokio::test]
async fn a_table_the_store_did_not_make_is_a_clear_error_not_a_panic() {
    let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    // The other tests' stores may be creating the extension at this moment: one of two
    // concurrent creations fails with a unique violation, and the extension is then there.
    if let Err(e) = client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
        .await
    {
        use tokio_postgres::error::SqlState;
        let code = e.code();
        assert!(
            code == Some(&SqlState::UNIQUE_VIOLATION) || code == Some(&SqlState::DUPLICATE_OBJECT),
            "{e}"
        );
    }
    client
        .batch_execute(&format!(
            "DROP TABLE IF EXISTS foreign_tools;
             CREATE TABLE foreign_tools (name text PRIMARY KEY, content_hash text, embedding vector({DIMENSION}));
             INSERT INTO foreign_tools VALUES ('weather', NULL, NULL);"
        ))
        .await
        .expect("makes the table");

    let store = PgVectorStore::connect(&url(), "foreign_tools", DIMENSION)
        .await
        .expect("the table exists, so connecting leaves it as it is");
    let err = store.hashes().await.expect_err("a NULL hash");
    let text = err.to_string();
    assert!(
        text.contains("`content_hash` in table `foreign_tools`") && text.contains("NULL"),
        "{text}"
    );
    let err = store
        .search(&vector("weather"), 3, None)
        .await
        .expect_err("a NULL embedding has no score");
    let text = err.to_string();
    assert!(text.contains("`score` in table `foreign_tools`"), "{text}");
    client
        .batch_execute("DROP TABLE foreign_tools")
        .await
        .expect("drops the table");
}
