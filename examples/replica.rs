//! One replica of a tool server meant to run as several behind a load balancer
//! ([docs/mcp.md](../docs/mcp.md), "Several replicas"): its tools keep nothing in the process
//! between calls, so any replica may answer any request of protocol 2026-07-28 (older
//! versions keep a session on the replica that made it: the balancer routes by
//! `Mcp-Session-Id`).
//!
//! ```text
//! REPLICA_NAME=a REPLICA_JOURNAL=/tmp/a.journal \
//!     cargo run --features mcp --example replica -- 127.0.0.1:8801
//! ```
//!
//! `deposit` writes each deposit's key to the journal named by `REPLICA_JOURNAL` (one line per
//! deposit, written before the answer): the record a real service keeps in its database, by
//! which the load-balancing test (`tests/mcp/replicas.rs`) checks that no call ran twice.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use ai_tool::mcp::{serve_http_with, HttpOptions, McpServer};
use ai_tool::prelude::*;

/// Deposits, journaled.
struct Bank {
    replica: String,
    journal: Option<Mutex<std::fs::File>>,
}

#[ai_tools]
impl Bank {
    /// Deposits an amount under a key the caller chooses (one key per deposit).
    #[ai_tool]
    async fn deposit(&self, key: String, amount: u32) -> Result<String, String> {
        if let Some(journal) = &self.journal {
            let mut file = journal.lock().map_err(|_| "the journal broke".to_owned())?;
            writeln!(file, "{key}").map_err(|e| format!("writing the journal: {e}"))?;
        }
        Ok(format!(
            "deposited {amount} under {key} at {}",
            self.replica
        ))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(addr) = std::env::args().nth(1) else {
        eprintln!("usage: replica 127.0.0.1:PORT (env REPLICA_NAME, REPLICA_JOURNAL)");
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse()?;
    let journal = match std::env::var_os("REPLICA_JOURNAL") {
        Some(path) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        )),
        None => None,
    };
    let bank = Bank {
        replica: std::env::var("REPLICA_NAME").unwrap_or_else(|_| addr.to_string()),
        journal,
    };
    let executor = Executor::builder().service(Arc::new(bank)).build()?;
    let server = McpServer::new(executor)?.with_server_info("bank", "0.1.0");
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("serving MCP on http://{}/mcp", listener.local_addr()?);
    serve_http_with(server, listener, HttpOptions::default()).await?;
    Ok(())
}
