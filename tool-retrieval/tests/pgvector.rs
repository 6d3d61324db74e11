//! The pgvector store against a real PostgreSQL (started by `scripts/test.sh` through
//! `scripts/postgres.sh`, URL in `AI_TOOL_PG_URL`): what its SQL does in the database.
#![cfg(feature = "pgvector")]

use std::collections::HashSet;

use tool_retrieval::pgvector::PgVectorStore;
use tool_retrieval::{EmbedFuture, EmbeddingProvider, RetrieveError, StoredTool, ToolStore};

const DIMENSION: usize = 16;

/// A vector per text read from its number (`tool 17`): spread over the sphere, never zero.
struct Numbered;

impl EmbeddingProvider for Numbered {
    fn model_id(&self) -> &str {
        "test/numbered"
    }
    fn dimension(&self) -> usize {
        DIMENSION
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move { Ok(texts.iter().map(|t| numbered(t)).collect()) })
    }
}

fn numbered(text: &str) -> Vec<f32> {
    numbered_of(text, DIMENSION)
}

fn numbered_of(text: &str, dimension: usize) -> Vec<f32> {
    let n: f32 = text
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0);
    (0..dimension)
        .map(|j| 1.5 + ((n + 1.0) * (j as f32 + 1.0) * 0.37).sin())
        .collect()
}

/// [`Numbered`] in 3,072 dimensions, as OpenAI's text-embedding-3-large makes.
struct Large;

const LARGE: usize = 3072;

impl EmbeddingProvider for Large {
    fn model_id(&self) -> &str {
        "test/numbered"
    }
    fn dimension(&self) -> usize {
        LARGE
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move { Ok(texts.iter().map(|t| numbered_of(t, LARGE)).collect()) })
    }
}

fn url() -> String {
    std::env::var("AI_TOOL_PG_URL")
        .expect("AI_TOOL_PG_URL: run the tests through scripts/test.sh, which starts PostgreSQL")
}

async fn client() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    client
}

/// A table of this test's own, dropped first should an earlier run have left it.
async fn fresh_table(name: &str) -> String {
    let table = format!("retrieval_{name}_{}", std::process::id());
    drop_table(&table).await;
    table
}

async fn drop_table(table: &str) {
    client()
        .await
        .batch_execute(&format!("DROP TABLE IF EXISTS \"{table}\""))
        .await
        .expect("drops the table");
}

/// The names of the table's indexes.
async fn indexes(table: &str) -> Vec<String> {
    let rows = client()
        .await
        .query(
            "SELECT indexname::text FROM pg_indexes WHERE tablename = $1 ORDER BY 1",
            &[&table],
        )
        .await
        .expect("lists the indexes");
    rows.iter().map(|r| r.get(0)).collect()
}

fn tools(count: usize) -> Vec<StoredTool> {
    (0..count)
        .map(|i| StoredTool::new(format!("t{i}"), format!("tool {i}"), "test/numbered"))
        .collect()
}

#[tokio::test]
async fn a_search_for_more_than_40_gets_them_all_through_the_hnsw_index() {
    let table = fresh_table("wide").await;
    let store = PgVectorStore::connect(&url(), &table, DIMENSION)
        .await
        .unwrap();
    store.sync(&tools(100), &Numbered).await.unwrap();
    let query = numbered("tool 3");
    // pgvector's HNSW scan stops at `hnsw.ef_search` rows, 40 by default.
    for k in [41, 60, 100] {
        let found = store.search(&query, k, None).await.unwrap();
        let names: HashSet<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!((found.len(), names.len()), (k, k), "k = {k}");
        assert_eq!(found[0].0, "t3");
    }
    // The cosine distance to a zero vector is NaN: nothing is similar to it, and no NaN is
    // returned, first or anywhere.
    assert!(store
        .search(&[0.0; DIMENSION], 5, None)
        .await
        .unwrap()
        .is_empty());
    // Past the index's largest search list, an exact scan.
    let all = store.search(&query, 5000, None).await.unwrap();
    assert_eq!(all.len(), 100);
    assert!(all.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
}

/// [`Numbered`]'s vectors, one fewer than the texts.
struct OneShort;

impl EmbeddingProvider for OneShort {
    fn model_id(&self) -> &str {
        "test/one-short"
    }
    fn dimension(&self) -> usize {
        DIMENSION
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let count = texts.len().saturating_sub(1);
        Box::pin(async move { Ok(texts[..count].iter().map(|t| numbered(t)).collect()) })
    }
}

#[tokio::test]
async fn a_short_batch_or_a_name_given_twice_writes_nothing() {
    let table = fresh_table("short").await;
    let store = PgVectorStore::connect(&url(), &table, DIMENSION)
        .await
        .unwrap();
    let err = store.sync(&tools(3), &OneShort).await.unwrap_err();
    assert_eq!(
        err,
        RetrieveError::embedding(
            "the embedder `test/one-short` returned 2 vectors for 3 texts; it must return one per text"
        )
    );
    assert!(
        store.hashes().await.unwrap().is_empty(),
        "no tool is stored"
    );

    let mut twice = tools(2);
    twice.push(twice[0].clone());
    let err = store.sync(&twice, &Numbered).await.unwrap_err();
    assert_eq!(
        err,
        RetrieveError::store("the tool `t0` is given twice: a store keeps one embedding per name")
    );
    assert!(store.hashes().await.unwrap().is_empty());
    let report = store.sync(&tools(3), &Numbered).await.unwrap();
    assert_eq!(
        (report.embedded, store.hashes().await.unwrap().len()),
        (3, 3)
    );
}

#[tokio::test]
async fn a_table_named_by_a_reserved_word_works() {
    for table in ["user", "order"] {
        drop_table(table).await;
        let store = PgVectorStore::connect(&url(), table, DIMENSION)
            .await
            .unwrap();
        store.sync(&tools(3), &Numbered).await.unwrap();
        assert_eq!(store.hashes().await.unwrap().len(), 3, "{table}");
        let found = store.search(&numbered("tool 1"), 1, None).await.unwrap();
        assert_eq!(found[0].0, "t1", "{table}");
        assert_eq!(
            indexes(table).await,
            [format!("{table}_embedding_hnsw"), format!("{table}_pkey")]
        );
        drop_table(table).await;
    }
}

#[tokio::test]
async fn the_longest_table_name_still_gets_its_index() {
    let table = format!("retrieval_long_{}_", std::process::id());
    let table = format!("{table}{}", "x".repeat(48 - table.len()));
    drop_table(&table).await;
    let store = PgVectorStore::connect(&url(), &table, DIMENSION)
        .await
        .unwrap();
    store.sync(&tools(2), &Numbered).await.unwrap();
    let names = indexes(&table).await;
    assert!(
        names.contains(&format!("{table}_embedding_hnsw")),
        "{names:?}"
    );
    drop_table(&table).await;
    let longer = format!("{table}x");
    let err = PgVectorStore::connect(&url(), &longer, DIMENSION)
        .await
        .err()
        .expect("a 49-character name is refused");
    assert!(err.to_string().contains("at most 48"), "{err}");
}

#[tokio::test]
async fn past_2000_dimensions_the_table_has_no_hnsw_index_and_search_is_exact() {
    let table = fresh_table("large").await;
    let store = PgVectorStore::connect(&url(), &table, LARGE)
        .await
        .expect("3,072 dimensions connect");
    let set: Vec<StoredTool> = (0..50)
        .map(|i| StoredTool::new(format!("t{i}"), format!("tool {i}"), "test/numbered"))
        .collect();
    store.sync(&set, &Large).await.unwrap();
    assert_eq!(indexes(&table).await, [format!("{table}_pkey")]);
    let found = store
        .search(&numbered_of("tool 7", LARGE), 45, None)
        .await
        .unwrap();
    assert_eq!(found.len(), 45);
    assert_eq!(found[0].0, "t7");
    drop_table(&table).await;
}
