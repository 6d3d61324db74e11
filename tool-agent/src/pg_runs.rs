//! A [`RunStore`] in a PostgreSQL table, shared by every replica that connects to it.
//!
//! One row per run: its owner, its state as JSON, the calls that wait (for listing without
//! reading the state), when it was saved and when it expires (by the database's clock, the
//! one clock every replica shares), and when and by which take it was taken. A take is one
//! `UPDATE .. WHERE taken_at IS NULL`: of two replicas taking a run at once, PostgreSQL's row
//! lock lets one win; the other's update finds it taken. Each take carries a random token of
//! its own, so that a take asked again after a dropped connection (its first answer lost)
//! gets the state it already took rather than `Taken`. The row, its state included, stays
//! ten minutes after the take (or until the run would have expired, when sooner), then goes
//! with the next purge.

use std::time::{Duration, SystemTime};

use tool_postgres::tokio_postgres::{self, Client};
use tool_postgres::{Connection, PgError};

use crate::run_store::{RunId, RunStore, RunStoreError, RunStoreFuture, RunStoreLimits, SavedRun};
use crate::{PendingApproval, RunState};

/// Interrupted runs in a PostgreSQL table (feature `postgres`).
///
/// ```no_run
/// # async fn demo() -> Result<(), tool_agent::RunStoreError> {
/// use tool_agent::PgRunStore;
/// let store = PgRunStore::connect("postgres://agent@db.internal/app", "ai_tool_runs").await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PgRunStore {
    connection: Connection,
    /// The table's name, for messages.
    table: String,
    /// The table's name quoted, for SQL.
    sql_table: String,
    limits: RunStoreLimits,
}

/// The longest table name whose index name, `{table}_owner`, fits PostgreSQL's 63 bytes.
const MAX_TABLE_NAME: usize = 63 - "_owner".len();

fn pg_error(e: PgError) -> RunStoreError {
    let (message, source) = e.into_parts();
    match source {
        Some(source) => RunStoreError::Store {
            message: format!("{message}: {source}"),
            source: Some(Box::new(source)),
        },
        None => RunStoreError::store(message),
    }
}

fn sql_error(doing: &str, table: &str, e: tokio_postgres::Error) -> RunStoreError {
    RunStoreError::Store {
        message: format!("{doing} in table `{table}`: {e}"),
        source: Some(Box::new(e)),
    }
}

/// The table's name as PostgreSQL keeps it (folded to lower case) and as SQL writes it
/// (quoted, so that a reserved word is a name).
fn table_names(table: &str) -> Result<(String, String), RunStoreError> {
    let plain = !table.is_empty()
        && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !table.starts_with(|c: char| c.is_ascii_digit());
    if !plain || table.len() > MAX_TABLE_NAME {
        return Err(RunStoreError::Refused(format!(
            "`{table}` is not a plain SQL identifier (letters, digits, `_`, at most \
             {MAX_TABLE_NAME} characters)"
        )));
    }
    let folded = table.to_ascii_lowercase();
    let quoted = format!("\"{folded}\"");
    Ok((folded, quoted))
}

fn setup_sql(table: &str, sql_table: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {sql_table} (
             id text PRIMARY KEY,
             owner text NOT NULL,
             state text NOT NULL,
             pending text NOT NULL,
             saved_at timestamptz NOT NULL DEFAULT now(),
             expires_at timestamptz NOT NULL,
             taken_at timestamptz,
             taken_by text
         );
         CREATE INDEX IF NOT EXISTS \"{table}_owner\" ON {sql_table} (owner, saved_at);"
    )
}

/// What a take found when its update took nothing.
enum Untaken {
    NotFound,
    Taken,
    Expired,
}

impl PgRunStore {
    /// Connects (`postgres://user@host:port/db`, TLS as
    /// [`tool_postgres::open`] speaks it) and creates the table and its index if missing.
    /// `table` is a plain SQL identifier (letters, digits, `_`), folded to lower case.
    pub async fn connect(url: &str, table: &str) -> Result<Self, RunStoreError> {
        let (table, sql_table) = table_names(table)?;
        let connection = Connection::open(url).await.map_err(pg_error)?;
        {
            let held = connection.client().await.map_err(pg_error)?;
            let ddl = setup_sql(&table, &sql_table);
            // Two replicas starting at once on a fresh database may both find the table
            // missing; the one that loses the race finds it made when it tries again.
            if let Err(e) = held.client.batch_execute(&ddl).await {
                let raced = e.code().is_some_and(|code| {
                    *code == tokio_postgres::error::SqlState::UNIQUE_VIOLATION
                        || *code == tokio_postgres::error::SqlState::DUPLICATE_OBJECT
                });
                if !raced {
                    return Err(sql_error("creating the run table", &table, e));
                }
                held.client
                    .batch_execute(&ddl)
                    .await
                    .map_err(|e| sql_error("creating the run table", &table, e))?;
            }
        }
        Ok(PgRunStore {
            connection,
            table,
            sql_table,
            limits: RunStoreLimits::default(),
        })
    }

    /// The store with these limits.
    pub fn with_limits(mut self, limits: RunStoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Runs `request` on the connection; when the connection dropped under it, once more on
    /// a new one. Every request is safe to ask twice (a read, a save of a fixed id, a take by
    /// its own token).
    async fn twice(&self, request: &Request<'_>) -> Result<Answer, RunStoreError> {
        let mut held = self.connection.client().await.map_err(pg_error)?;
        match self.run(&mut held.client, request).await {
            Err(Failure::Sql(doing, e)) => {
                let generation = held.generation;
                drop(held);
                if !self.connection.dropped(Some(&e), generation).await {
                    return Err(sql_error(doing, &self.table, e));
                }
                let mut held = self.connection.client().await.map_err(pg_error)?;
                self.run(&mut held.client, request)
                    .await
                    .map_err(|f| f.into_error(&self.table))
            }
            done => done.map_err(|f| f.into_error(&self.table)),
        }
    }

    async fn run(&self, client: &mut Client, request: &Request<'_>) -> Result<Answer, Failure> {
        match *request {
            Request::Save {
                id,
                owner,
                state,
                pending,
                ttl,
            } => self
                .insert(client, id, owner, state, pending, ttl)
                .await
                .map(|()| Answer::Saved),
            Request::List { owner } => self.list(client, owner).await.map(Answer::Listed),
            Request::Take { owner, id, token } => self
                .take_once(client, owner, id, token)
                .await
                .map(Answer::Took),
            Request::Purge => client
                .execute(
                    &format!("DELETE FROM {} WHERE expires_at <= now()", self.sql_table),
                    &[],
                )
                .await
                .map(Answer::Purged)
                .map_err(|e| Failure::Sql("purging expired runs", e)),
        }
    }

    async fn insert(
        &self,
        client: &mut Client,
        id: &RunId,
        owner: &str,
        state: &str,
        pending: &str,
        ttl: Duration,
    ) -> Result<(), Failure> {
        let transaction = client
            .transaction()
            .await
            .map_err(|e| Failure::Sql("saving a run", e))?;
        // One save at a time per owner, so that two replicas saving at once cannot both pass
        // the owner's cap.
        transaction
            .execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&owner])
            .await
            .map_err(|e| Failure::Sql("saving a run", e))?;
        transaction
            .execute(
                &format!(
                    "DELETE FROM {} WHERE owner = $1 AND expires_at <= now()",
                    self.sql_table
                ),
                &[&owner],
            )
            .await
            .map_err(|e| Failure::Sql("purging an owner's expired runs", e))?;
        let row = transaction
            .query_one(
                &format!(
                    "SELECT count(*) FILTER (WHERE owner = $1), count(*) FROM {} \
                     WHERE taken_at IS NULL AND expires_at > now()",
                    self.sql_table
                ),
                &[&owner],
            )
            .await
            .map_err(|e| Failure::Sql("counting waiting runs", e))?;
        let owned: i64 = row.get(0);
        let all: i64 = row.get(1);
        // A save asked again after a dropped connection finds its own row: done already.
        let exists = transaction
            .query_opt(
                &format!("SELECT 1 FROM {} WHERE id = $1", self.sql_table),
                &[&id.as_str()],
            )
            .await
            .map_err(|e| Failure::Sql("saving a run", e))?
            .is_some();
        if exists {
            return Ok(());
        }
        self.limits
            .check_room(owner, owned as usize, all as usize)
            .map_err(Failure::Refused)?;
        let millis = ttl.as_secs_f64() * 1000.0;
        transaction
            .execute(
                &format!(
                    "INSERT INTO {} (id, owner, state, pending, expires_at) \
                     VALUES ($1, $2, $3, $4, now() + $5::float8 * interval '1 millisecond')",
                    self.sql_table
                ),
                &[&id.as_str(), &owner, &state, &pending, &millis],
            )
            .await
            .map_err(|e| Failure::Sql("saving a run", e))?;
        transaction
            .commit()
            .await
            .map_err(|e| Failure::Sql("saving a run", e))
    }

    async fn list(&self, client: &mut Client, owner: &str) -> Result<Vec<SavedRun>, Failure> {
        let limit = i64::try_from(self.limits.max_runs_per_owner).unwrap_or(i64::MAX);
        let rows = client
            .query(
                &format!(
                    "SELECT id, pending, saved_at, expires_at FROM {} \
                     WHERE owner = $1 AND taken_at IS NULL AND expires_at > now() \
                     ORDER BY saved_at, id LIMIT $2",
                    self.sql_table
                ),
                &[&owner, &limit],
            )
            .await
            .map_err(|e| Failure::Sql("listing waiting runs", e))?;
        let mut runs = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row
                .try_get(0)
                .map_err(|e| Failure::Sql("reading `id`", e))?;
            let pending: String = row
                .try_get(1)
                .map_err(|e| Failure::Sql("reading `pending`", e))?;
            let pending: Vec<PendingApproval> = serde_json::from_str(&pending).map_err(|e| {
                Failure::Refused(RunStoreError::store(format!(
                    "the pending calls of run `{id}` in table `{}` do not read back: {e}",
                    self.table
                )))
            })?;
            let saved_at: SystemTime = row
                .try_get(2)
                .map_err(|e| Failure::Sql("reading `saved_at`", e))?;
            let expires_at: SystemTime = row
                .try_get(3)
                .map_err(|e| Failure::Sql("reading `expires_at`", e))?;
            runs.push(SavedRun {
                id: RunId::new(id),
                pending,
                saved_at,
                expires_at,
            });
        }
        Ok(runs)
    }

    async fn take_once(
        &self,
        client: &mut Client,
        owner: &str,
        id: &RunId,
        token: &str,
    ) -> Result<Result<String, Untaken>, Failure> {
        let taken = client
            .query_opt(
                &format!(
                    "UPDATE {} SET taken_at = now(), taken_by = $3, \
                     expires_at = LEAST(expires_at, now() + interval '10 minutes') \
                     WHERE id = $1 AND owner = $2 AND expires_at > now() \
                     AND (taken_at IS NULL OR taken_by = $3) RETURNING state",
                    self.sql_table
                ),
                &[&id.as_str(), &owner, &token],
            )
            .await
            .map_err(|e| Failure::Sql("taking a run", e))?;
        if let Some(row) = taken {
            let state: String = row
                .try_get(0)
                .map_err(|e| Failure::Sql("reading `state`", e))?;
            return Ok(Ok(state));
        }
        let found = client
            .query_opt(
                &format!(
                    "SELECT taken_at IS NOT NULL, expires_at <= now() FROM {} \
                     WHERE id = $1 AND owner = $2",
                    self.sql_table
                ),
                &[&id.as_str(), &owner],
            )
            .await
            .map_err(|e| Failure::Sql("taking a run", e))?;
        Ok(Err(match found {
            None => Untaken::NotFound,
            Some(row) if row.get::<_, bool>(1) => Untaken::Expired,
            Some(_) => Untaken::Taken,
        }))
    }
}

/// What a store asks the database.
enum Request<'a> {
    Save {
        id: &'a RunId,
        owner: &'a str,
        state: &'a str,
        pending: &'a str,
        ttl: Duration,
    },
    List {
        owner: &'a str,
    },
    Take {
        owner: &'a str,
        id: &'a RunId,
        token: &'a str,
    },
    Purge,
}

/// What the database answered.
enum Answer {
    Saved,
    Listed(Vec<SavedRun>),
    Took(Result<String, Untaken>),
    Purged(u64),
}

/// An answer to another request than asked: never given.
fn mismatched() -> RunStoreError {
    RunStoreError::store("the database's answer is not to the request asked")
}

/// How one request failed: PostgreSQL's error and what was being done (the connection may
/// have dropped: asked again), or a refusal of the store's own.
enum Failure {
    Sql(&'static str, tokio_postgres::Error),
    Refused(RunStoreError),
}

impl Failure {
    fn into_error(self, table: &str) -> RunStoreError {
        match self {
            Failure::Sql(doing, e) => sql_error(doing, table, e),
            Failure::Refused(e) => e,
        }
    }
}

impl RunStore for PgRunStore {
    fn save<'a>(
        &'a self,
        owner: &'a str,
        state: &'a RunState,
        ttl: Duration,
    ) -> RunStoreFuture<'a, RunId> {
        Box::pin(async move {
            let json = self.limits.admit(state, ttl)?;
            let pending: Vec<&PendingApproval> = state.pending().collect();
            let pending = serde_json::to_string(&pending)
                .map_err(|e| RunStoreError::store(format!("writing the pending calls: {e}")))?;
            let id = RunId::random()?;
            let request = Request::Save {
                id: &id,
                owner,
                state: &json,
                pending: &pending,
                ttl,
            };
            match self.twice(&request).await? {
                Answer::Saved => Ok(id),
                _ => Err(mismatched()),
            }
        })
    }

    fn pending<'a>(&'a self, owner: &'a str) -> RunStoreFuture<'a, Vec<SavedRun>> {
        Box::pin(async move {
            match self.twice(&Request::List { owner }).await? {
                Answer::Listed(runs) => Ok(runs),
                _ => Err(mismatched()),
            }
        })
    }

    fn take<'a>(&'a self, owner: &'a str, id: &'a RunId) -> RunStoreFuture<'a, RunState> {
        Box::pin(async move {
            let token = RunId::random()?;
            let request = Request::Take {
                owner,
                id,
                token: token.as_str(),
            };
            let Answer::Took(taken) = self.twice(&request).await? else {
                return Err(mismatched());
            };
            match taken {
                Ok(state) => serde_json::from_str(&state).map_err(|e| {
                    RunStoreError::store(format!(
                        "the state of run `{id}` in table `{}` does not read back: {e}",
                        self.table
                    ))
                }),
                Err(Untaken::NotFound) => Err(RunStoreError::NotFound(id.clone())),
                Err(Untaken::Taken) => Err(RunStoreError::Taken(id.clone())),
                Err(Untaken::Expired) => Err(RunStoreError::Expired(id.clone())),
            }
        })
    }

    fn purge_expired(&self) -> RunStoreFuture<'_, usize> {
        Box::pin(async move {
            let Answer::Purged(purged) = self.twice(&Request::Purge).await? else {
                return Err(mismatched());
            };
            Ok(usize::try_from(purged).unwrap_or(usize::MAX))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{setup_sql, table_names};

    #[test]
    fn the_table_name_is_a_plain_identifier_quoted() {
        let (table, sql) = table_names("Runs").unwrap();
        assert_eq!((table.as_str(), sql.as_str()), ("runs", "\"runs\""));
        assert!(setup_sql(&table, &sql).contains("CREATE TABLE IF NOT EXISTS \"runs\" ("));
        for bad in [
            "",
            "runs; drop table x",
            "\"runs\"",
            "1runs",
            &"r".repeat(58),
        ] {
            assert!(table_names(bad).is_err(), "{bad}");
        }
    }
}
