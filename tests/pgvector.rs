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

/// Two replicas, each with a store on one table: the second's sync embeds nothing the first
/// embedded (the content hashes are in the table), so replicas do not each embed the tools.
#[tokio::test]
async fn a_second_replica_on_the_same_table_embeds_nothing() {
    let table = format!("tools_replicas_{}", std::process::id());
    let first = PgVectorStore::connect(&url(), &table, DIMENSION)
        .await
        .unwrap();
    let second = PgVectorStore::connect(&url(), &table, DIMENSION)
        .await
        .unwrap();
    let embedder = Hashing {
        embedded: AtomicUsize::new(0),
    };
    let synced = first.sync(&tools(), &embedder).await.unwrap();
    assert_eq!(synced.embedded, tools().len());
    let synced = second.sync(&tools(), &embedder).await.unwrap();
    assert_eq!((synced.embedded, synced.unchanged), (0, tools().len()));
    assert_eq!(embedder.embedded.load(Ordering::SeqCst), tools().len());
    let (admin, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    admin
        .batch_execute(&format!("DROP TABLE \"{table}\""))
        .await
        .unwrap();
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

/// The store's connection dropped under it (its backend terminated, as a restart or a failover
/// does to every connection): the next request connects again and is answered.
#[tokio::test]
async fn the_store_connects_again_after_its_connection_drops() {
    let table = format!("tools_reconnect_{}", std::process::id());
    let name = format!("ai-tool-reconnect-{}", std::process::id());
    let separator = if url().contains('?') { '&' } else { '?' };
    let tagged = format!("{}{separator}application_name={name}", url());
    let store = PgVectorStore::connect(&tagged, &table, DIMENSION)
        .await
        .unwrap();
    let embedder = Hashing {
        embedded: AtomicUsize::new(0),
    };
    store.sync(&tools(), &embedder).await.unwrap();
    let before = store
        .search(&vector("music playlist"), 1, None)
        .await
        .unwrap();

    let (admin, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let ended = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .await
        .unwrap();
    assert_eq!(ended.len(), 1, "the store's one connection was ended");
    // Asked at once (the store may not have seen the drop yet) and after it has.
    let at_once = store
        .search(&vector("music playlist"), 1, None)
        .await
        .unwrap();
    assert_eq!(at_once, before);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(store.hashes().await.unwrap().len(), tools().len());
    let again = store.sync(&tools(), &embedder).await.unwrap();
    assert_eq!(again.unchanged, tools().len());
    admin
        .batch_execute(&format!("DROP TABLE \"{table}\""))
        .await
        .unwrap();
}

/// TLS to PostgreSQL, through a TLS front on 127.0.0.1 that forwards to the test server (whose
/// build has no TLS of its own), reached with `sslnegotiation=direct`: the certificate (of a
/// test-only CA in `tests/pg-tls`, for 127.0.0.1) is verified against `sslrootcert`; without
/// it the connection is refused naming `sslrootcert`; and `sslmode=require` refuses a server
/// that offers no TLS.
#[tokio::test]
async fn the_store_speaks_tls_verified_against_sslrootcert() {
    use std::sync::Arc;
    use tokio_rustls::rustls;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pg-tls");
    let read = |name: &str| std::fs::read(format!("{dir}/{name}")).unwrap();
    let certs: Vec<rustls::pki_types::CertificateDer<'static>> =
        rustls::pki_types::pem::PemObject::pem_slice_iter(&read("test-only-server.pem"))
            .collect::<Result<_, _>>()
            .unwrap();
    let key = <rustls::pki_types::PrivateKeyDer<'static> as rustls::pki_types::pem::PemObject>::from_pem_slice(
        &read("test-only-server.key"),
    )
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let server: tokio_postgres::Config = url().parse().unwrap();
    let port = server.get_ports().first().copied().unwrap_or(5432);
    let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let front_port = front.local_addr().unwrap().port();
    let handshakes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&handshakes);
    tokio::spawn(async move {
        while let Ok((socket, _)) = front.accept().await {
            let acceptor = acceptor.clone();
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                let mut plain = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    let through_tls = |extra: &str| {
        format!(
            "postgres://postgres@127.0.0.1:{front_port}/postgres?sslmode=require&sslnegotiation=direct{extra}"
        )
    };
    let table = format!("tools_tls_{}", std::process::id());
    let store = PgVectorStore::connect(
        &through_tls(&format!("&sslrootcert={dir}/test-only-ca.pem")),
        &table,
        DIMENSION,
    )
    .await
    .unwrap();
    let embedder = Hashing {
        embedded: AtomicUsize::new(0),
    };
    store.sync(&tools(), &embedder).await.unwrap();
    assert_eq!(store.hashes().await.unwrap().len(), tools().len());
    assert_eq!(handshakes.load(Ordering::SeqCst), 1, "one TLS connection");

    let unverified = PgVectorStore::connect(&through_tls(""), &table, DIMENSION)
        .await
        .err()
        .expect("a certificate of an unknown CA is refused")
        .to_string();
    assert!(unverified.contains("sslrootcert"), "{unverified}");
    assert_eq!(
        handshakes.load(Ordering::SeqCst),
        1,
        "no TLS connection was made"
    );

    let plain_url = format!("postgres://postgres@127.0.0.1:{port}/postgres?sslmode=require");
    let plain = PgVectorStore::connect(&plain_url, &table, DIMENSION).await;
    assert!(
        plain.is_err(),
        "a server without TLS is refused under sslmode=require"
    );

    let (admin, connection) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    admin
        .batch_execute(&format!("DROP TABLE \"{table}\""))
        .await
        .unwrap();
}
