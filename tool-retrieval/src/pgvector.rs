//! A PostgreSQL + pgvector tool store: one table of name, content hash and embedding, with an
//! HNSW cosine index; search in SQL.

use std::collections::HashMap;

use pgvector::Vector;
use tokio_postgres::error::SqlState;
use tokio_postgres::Client;
use tool_postgres::Connection;

use super::store::{check_unique, embed_tools};
use super::{EmbeddingProvider, RetrieveError, StoreFuture, StoredTool, SyncReport, ToolStore};

/// Tool embeddings in a PostgreSQL table.
///
/// One table per catalog: a sync makes the table hold exactly the tools it is given, deleting
/// the rows of any others, so retrievers over different tool sets need tables of their own.
pub struct PgVectorStore {
    /// The connection, opened again when it drops.
    connection: Connection,
    /// The table's name, for messages.
    table: String,
    /// The table's name quoted, for SQL.
    sql_table: String,
    dimension: usize,
}

fn store_error(e: tokio_postgres::Error) -> RetrieveError {
    RetrieveError::store_caused_by("PostgreSQL", e)
}

/// Column `index` of `row`, or an error naming the column and the table: a table made by
/// something else may hold a `NULL` or another type where this store writes its own.
fn column<'r, T: tokio_postgres::types::FromSql<'r>>(
    row: &'r tokio_postgres::Row,
    index: usize,
    table: &str,
) -> Result<T, RetrieveError> {
    row.try_get(index).map_err(|e| {
        let name = row.columns().get(index).map_or("?", |c| c.name());
        // tokio-postgres says which column in its own text and what was wrong in its source.
        let cause = std::error::Error::source(&e).map_or_else(String::new, |c| format!(" ({c})"));
        RetrieveError::store_caused_by(format!("reading `{name}` in table `{table}`{cause}"), e)
    })
}

/// The longest table name whose index name, `{table}_embedding_hnsw`, fits in PostgreSQL's 63
/// bytes: a longer one was cut to 63 and could collide with the table's own name, so that
/// `CREATE INDEX IF NOT EXISTS` made no index.
const MAX_TABLE_NAME: usize = 63 - "_embedding_hnsw".len();

/// The most dimensions pgvector's HNSW index takes on a `vector` column; past them the search
/// is an exact scan.
const MAX_INDEXED_DIMENSIONS: usize = 2000;

/// The most dimensions of pgvector's `vector` type.
const MAX_DIMENSIONS: usize = 16_000;

/// The table's name as PostgreSQL keeps it (an unquoted identifier is folded to lower case)
/// and as SQL writes it (quoted, so that a reserved word such as `user` or `order` is a name).
fn table_names(table: &str) -> Result<(String, String), RetrieveError> {
    let plain = !table.is_empty()
        && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !table.starts_with(|c: char| c.is_ascii_digit());
    if !plain {
        return Err(RetrieveError::store(format!(
            "`{table}` is not a plain SQL identifier (letters, digits, `_`)"
        )));
    }
    if table.len() > MAX_TABLE_NAME {
        return Err(RetrieveError::store(format!(
            "the table name `{table}` has {} characters; at most {MAX_TABLE_NAME} leave room for \
             its index's name (`{table}_embedding_hnsw`) in PostgreSQL's 63",
            table.len()
        )));
    }
    let folded = table.to_ascii_lowercase();
    let quoted = format!("\"{folded}\"");
    Ok((folded, quoted))
}

/// A store error from a connection's.
fn pg_error(e: tool_postgres::PgError) -> RetrieveError {
    match e.into_parts() {
        (message, Some(source)) => RetrieveError::store_caused_by(message, source),
        (message, None) => RetrieveError::store(message),
    }
}

/// PostgreSQL's error behind a store error, read where the store keeps it (behind an `Arc`,
/// which `Error::source` would hand out as itself, hiding its type).
fn pg_source(error: &RetrieveError) -> Option<&tokio_postgres::Error> {
    match error {
        RetrieveError::Store {
            source: Some(source),
            ..
        } => source.downcast_ref::<tokio_postgres::Error>(),
        _ => None,
    }
}

/// What `connect` runs: the extension, the table and, up to 2,000 dimensions, its HNSW index.
fn setup_sql(table: &str, dimension: usize) -> Result<String, RetrieveError> {
    let (folded, quoted) = table_names(table)?;
    if !(1..=MAX_DIMENSIONS).contains(&dimension) {
        return Err(RetrieveError::store(format!(
            "table `{folded}`: pgvector's vectors have 1 to {MAX_DIMENSIONS} dimensions, not \
             {dimension}"
        )));
    }
    let mut sql = format!(
        "CREATE EXTENSION IF NOT EXISTS vector;
         CREATE TABLE IF NOT EXISTS {quoted} (
             name text PRIMARY KEY,
             content_hash text NOT NULL,
             embedding vector({dimension}) NOT NULL
         );"
    );
    if dimension <= MAX_INDEXED_DIMENSIONS {
        sql.push_str(&format!(
            "\n         CREATE INDEX IF NOT EXISTS \"{folded}_embedding_hnsw\" ON {quoted} USING hnsw (embedding vector_cosine_ops);"
        ));
    }
    Ok(sql)
}

/// Refuses a table whose vectors have another dimension than `dimension`; a table not made
/// yet passes.
async fn check_dimension(
    client: &tokio_postgres::Client,
    table: &str,
    sql_table: &str,
    dimension: usize,
) -> Result<(), RetrieveError> {
    let held = client
        .query_opt(
            "SELECT atttypmod FROM pg_attribute \
             WHERE attrelid = to_regclass($1) AND attname = 'embedding' AND NOT attisdropped",
            &[&sql_table],
        )
        .await
        .map_err(store_error)?
        .and_then(|row| row.try_get::<_, i32>(0).ok());
    match held.filter(|held| *held > 0 && *held as usize != dimension) {
        Some(held) => Err(RetrieveError::store(format!(
            "table `{table}` holds vectors of {held} dimensions, not {dimension}: use another \
             table for this model, or drop this one to embed the tools again"
        ))),
        None => Ok(()),
    }
}

impl PgVectorStore {
    /// Connects (`postgres://user@host:port/db`), creates the `vector` extension, the table
    /// and its HNSW index if missing. TLS is spoken whenever the server offers it, its
    /// certificate verified against the platform's roots and the CA `sslrootcert=PATH` names
    /// (`sslmode=require` refuses a server without TLS, `sslmode=disable` never speaks it); a
    /// dropped connection is opened again at the next request. `table` is a plain SQL identifier (letters, digits, `_`;
    /// at most 48, so that the index's name fits), folded to lower case as PostgreSQL folds an
    /// unquoted name. Past 2,000 dimensions (pgvector's most for an HNSW index on `vector`)
    /// no index is made and each search is an exact scan.
    pub async fn connect(url: &str, table: &str, dimension: usize) -> Result<Self, RetrieveError> {
        let ddl = setup_sql(table, dimension)?;
        let (table, sql_table) = table_names(table)?;
        let connection = Connection::open(url).await.map_err(pg_error)?;
        let held = connection.client().await.map_err(pg_error)?;
        let client = &*held.client;
        // A table made before, for another model, keeps its dimension: said before its index
        // is asked for, rather than in PostgreSQL's words.
        check_dimension(client, &table, &sql_table, dimension).await?;
        // Two stores connecting at once to a fresh database may both find the extension or the
        // table missing; the one that loses the race finds them made when it tries again.
        if let Err(e) = client.batch_execute(&ddl).await {
            let raced = e.code().is_some_and(|code| {
                *code == SqlState::UNIQUE_VIOLATION || *code == SqlState::DUPLICATE_OBJECT
            });
            if !raced {
                return Err(store_error(e));
            }
            client.batch_execute(&ddl).await.map_err(store_error)?;
        }
        // And after: another store may have made the table, for another model, meanwhile.
        check_dimension(client, &table, &sql_table, dimension).await?;
        drop(held);
        Ok(PgVectorStore {
            connection,
            table,
            sql_table,
            dimension,
        })
    }

    /// The connection (and its generation), opened again first when it has dropped.
    async fn connection(
        &self,
    ) -> Result<(tokio::sync::MappedMutexGuard<'_, Client>, u64), RetrieveError> {
        let held = self.connection.client().await.map_err(pg_error)?;
        Ok((held.client, held.generation))
    }

    /// Whether a request on the connection of `generation` failed because it dropped: then,
    /// unless a newer connection was opened meanwhile, it is opened again, and the request is
    /// asked again.
    async fn dropped(&self, error: &RetrieveError, generation: u64) -> bool {
        self.connection.dropped(pg_source(error), generation).await
    }

    /// The names and content hashes in the table. Asked again, on a new connection, when the
    /// connection dropped under the request.
    pub async fn hashes(&self) -> Result<HashMap<String, String>, RetrieveError> {
        let (result, generation) = self.hashes_once().await;
        match result {
            Err(e) if self.dropped(&e, generation).await => self.hashes_once().await.0,
            done => done,
        }
    }

    async fn hashes_once(&self) -> (Result<HashMap<String, String>, RetrieveError>, u64) {
        let (client, generation) = match self.connection().await {
            Ok(held) => held,
            Err(e) => return (Err(e), u64::MAX),
        };
        (self.read_hashes(&client).await, generation)
    }

    async fn read_hashes(&self, client: &Client) -> Result<HashMap<String, String>, RetrieveError> {
        let rows = client
            .query(
                &format!("SELECT name, content_hash FROM {}", self.sql_table),
                &[],
            )
            .await
            .map_err(store_error)?;
        rows.iter()
            .map(|r| Ok((column(r, 0, &self.table)?, column(r, 1, &self.table)?)))
            .collect()
    }
}

impl ToolStore for PgVectorStore {
    /// Embeds the new and changed tools first (no transaction is held open meanwhile), then
    /// writes every change and deletes the removed tools in one transaction.
    fn sync<'a>(
        &'a self,
        tools: &'a [StoredTool],
        embedder: &'a dyn EmbeddingProvider,
    ) -> StoreFuture<'a, SyncReport> {
        Box::pin(async move {
            if embedder.dimension() != self.dimension {
                return Err(RetrieveError::store(format!(
                    "the table holds {} dimensions; the model makes {}",
                    self.dimension,
                    embedder.dimension()
                )));
            }
            check_unique(tools)?;
            let known = self.hashes().await?;
            let changed: Vec<&StoredTool> = tools
                .iter()
                .filter(|t| known.get(&t.name) != Some(&t.content_hash))
                .collect();
            let vectors = embed_tools(embedder, &changed).await?;
            let wanted: std::collections::HashSet<&str> =
                tools.iter().map(|t| t.name.as_str()).collect();
            let removed: Vec<&String> = known
                .keys()
                .filter(|n| !wanted.contains(n.as_str()))
                .collect();

            let (mut client, _) = self.connection().await?;
            let transaction = client.transaction().await.map_err(store_error)?;
            let upsert = format!(
                "INSERT INTO {} (name, content_hash, embedding) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding",
                self.sql_table
            );
            for (tool, vector) in changed.iter().zip(vectors) {
                let vector = Vector::from(vector);
                transaction
                    .execute(&upsert, &[&tool.name, &tool.content_hash, &vector])
                    .await
                    .map_err(store_error)?;
            }
            if !removed.is_empty() {
                let names: Vec<&str> = removed.iter().map(|n| n.as_str()).collect();
                transaction
                    .execute(
                        &format!("DELETE FROM {} WHERE name = ANY($1)", self.sql_table),
                        &[&names],
                    )
                    .await
                    .map_err(store_error)?;
            }
            transaction.commit().await.map_err(store_error)?;
            Ok(SyncReport {
                embedded: changed.len(),
                removed: removed.len(),
                unchanged: tools.len() - changed.len(),
            })
        })
    }

    fn search<'a>(
        &'a self,
        vector: &'a [f32],
        k: usize,
        threshold: Option<f32>,
    ) -> StoreFuture<'a, Vec<(String, f32)>> {
        Box::pin(async move {
            // A search reads only: asked again, on a new connection, when the connection
            // dropped under it.
            let (result, generation) = self.search_once(vector, k, threshold).await;
            match result {
                Err(e) if self.dropped(&e, generation).await => {
                    self.search_once(vector, k, threshold).await.0
                }
                done => done,
            }
        })
    }
}

impl PgVectorStore {
    async fn search_once(
        &self,
        vector: &[f32],
        k: usize,
        threshold: Option<f32>,
    ) -> (Result<Vec<(String, f32)>, RetrieveError>, u64) {
        let (mut client, generation) = match self.connection().await {
            Ok(held) => held,
            Err(e) => return (Err(e), u64::MAX),
        };
        (
            self.search_on(&mut client, vector, k, threshold).await,
            generation,
        )
    }

    async fn search_on(
        &self,
        client: &mut Client,
        vector: &[f32],
        k: usize,
        threshold: Option<f32>,
    ) -> Result<Vec<(String, f32)>, RetrieveError> {
        {
            let query = Vector::from(vector.to_vec());
            let limit = i64::try_from(k).unwrap_or(i64::MAX);
            let sql = format!(
                "SELECT name, (1 - (embedding <=> $1))::real AS score FROM {} ORDER BY embedding <=> $1 LIMIT $2",
                self.sql_table
            );
            // An HNSW scan returns at most `hnsw.ef_search` rows (40 unless set), whatever the
            // LIMIT: the search list is widened to `k` for this query alone, and past its
            // maximum the index is not used (an exact scan).
            let transaction = client.transaction().await.map_err(store_error)?;
            transaction
                .batch_execute(&scan_settings(k))
                .await
                .map_err(store_error)?;
            let rows = transaction
                .query(&sql, &[&query, &limit])
                .await
                .map_err(store_error)?;
            transaction.commit().await.map_err(store_error)?;
            let mut found = Vec::with_capacity(rows.len());
            for row in &rows {
                let name: String = column(row, 0, &self.table)?;
                let score: f32 = column(row, 1, &self.table)?;
                // The cosine distance to a zero vector is NaN: no similarity at all.
                if score.is_finite() && threshold.is_none_or(|t| score >= t) {
                    found.push((name, score));
                }
            }
            Ok(found)
        }
    }
}

/// pgvector's default `hnsw.ef_search`, and the most it accepts.
const EF_SEARCH_DEFAULT: usize = 40;
const EF_SEARCH_MAX: usize = 1000;

/// The settings of a search for `k` rows, for its transaction alone: an HNSW search list of at
/// least `k` (never under pgvector's default), or, past pgvector's maximum, no index scan.
fn scan_settings(k: usize) -> String {
    if k > EF_SEARCH_MAX {
        "SET LOCAL enable_indexscan = off".to_owned()
    } else {
        format!("SET LOCAL hnsw.ef_search = {}", k.max(EF_SEARCH_DEFAULT))
    }
}

#[cfg(test)]
mod tests {
    use super::{scan_settings, setup_sql, RetrieveError};

    #[test]
    fn the_setup_quotes_the_table_so_a_reserved_word_is_a_name() {
        let sql = setup_sql("User", 16).unwrap();
        assert!(
            sql.contains("CREATE TABLE IF NOT EXISTS \"user\" ("),
            "{sql}"
        );
        assert!(
            sql.contains("INDEX IF NOT EXISTS \"user_embedding_hnsw\" ON \"user\" USING hnsw"),
            "{sql}"
        );
        assert!(setup_sql("tools; drop table x", 16).is_err());
        assert!(setup_sql("\"x\"", 16).is_err());
    }

    #[test]
    fn a_table_name_leaving_no_room_for_the_index_name_is_refused() {
        let longest = "t".repeat(48);
        let sql = setup_sql(&longest, 16).unwrap();
        let index = format!("{longest}_embedding_hnsw");
        assert_eq!(index.len(), 63);
        assert!(sql.contains(&format!("\"{index}\"")), "{sql}");
        let err = setup_sql(&"t".repeat(49), 16).unwrap_err();
        assert_eq!(
            err,
            RetrieveError::store(format!(
                "the table name `{0}` has 49 characters; at most 48 leave room for its index's \
                 name (`{0}_embedding_hnsw`) in PostgreSQL's 63",
                "t".repeat(49)
            ))
        );
    }

    #[test]
    fn past_2000_dimensions_no_hnsw_index_is_made() {
        assert!(setup_sql("tools", 2000).unwrap().contains("USING hnsw"));
        let sql = setup_sql("tools", 3072).unwrap();
        assert!(
            sql.contains("vector(3072)") && !sql.contains("INDEX"),
            "{sql}"
        );
        assert!(setup_sql("tools", 0).is_err());
        assert!(setup_sql("tools", 16_001).is_err());
    }

    #[test]
    fn the_search_list_is_widened_to_k_and_past_1000_the_scan_is_exact() {
        assert_eq!(scan_settings(0), "SET LOCAL hnsw.ef_search = 40");
        assert_eq!(scan_settings(60), "SET LOCAL hnsw.ef_search = 60");
        assert_eq!(scan_settings(1000), "SET LOCAL hnsw.ef_search = 1000");
        assert_eq!(scan_settings(1001), "SET LOCAL enable_indexscan = off");
        assert_eq!(
            scan_settings(usize::MAX),
            "SET LOCAL enable_indexscan = off"
        );
    }
}
