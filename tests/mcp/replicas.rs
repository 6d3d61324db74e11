//! Several replicas of a tool server behind a real load balancer: HAProxy (Debian's package,
//! `scripts/haproxy.sh`) on 127.0.0.1 in front of three `examples/replica.rs`, called by 32
//! clients of the official Python SDK (`tests/mcp/replicas_client.py`).
//!
//! Protocol 2026-07-28 needs no affinity: 10,000 calls, one replica killed mid-run, and every
//! call answers once, with its result or an error of the transport the client may retry; no
//! deposit is made twice (the replicas' journals), none answered "ok" without being made.
//! Protocol 2025-11-25 keeps a session on the replica that made it: the balancer routes by
//! `Mcp-Session-Id`, and every call of 2,000 answers.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::support::{example_replica, free_port, mcp_tools, wait_for_port, Spawned};

/// HAProxy started by `scripts/haproxy.sh`, stopped (and its directory removed) when dropped.
struct Balancer {
    run: PathBuf,
}

impl Balancer {
    fn start(run: &Path, front: u16, backends: &[u16]) -> Balancer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/haproxy.sh");
        let output = std::process::Command::new("bash")
            .arg(script)
            .arg("start")
            .arg(run)
            .arg(front.to_string())
            .args(backends.iter().map(u16::to_string))
            .output()
            .expect("running scripts/haproxy.sh");
        assert!(
            output.status.success(),
            "starting HAProxy failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Balancer {
            run: run.to_owned(),
        }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/haproxy.sh");
        let _ = std::process::Command::new("bash")
            .arg(script)
            .arg("stop")
            .arg(&self.run)
            .status();
    }
}

/// A replica named `name` on `port`, journaling its deposits into `dir/NAME.journal`.
async fn replica(name: &str, port: u16, dir: &Path) -> Spawned {
    let mut command = Command::new(example_replica());
    command
        .arg(format!("127.0.0.1:{port}"))
        .env("REPLICA_NAME", name)
        .env("REPLICA_JOURNAL", dir.join(format!("{name}.journal")))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let spawned = Spawned::start(&mut command);
    wait_for_port(port).await;
    spawned
}

/// How many times each key was deposited, over every replica's journal.
fn journaled(dir: &Path) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for name in ["a", "b", "c"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.journal"))).unwrap_or_default();
        for key in text.lines() {
            *counts.entry(key.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

/// Runs the clients to their end; `when` (a count of outcomes) and `then` (run once the
/// clients print it) kill a replica mid-run. Their JSON summary.
async fn clients(tools: &Path, args: &[&str], mut kill_at: Option<(usize, &mut Spawned)>) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/replicas_client.py");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .args(args)
        .env("PYTHONPATH", tools.join("python"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Spawned::start(&mut command);
    let stderr = child.0.stderr.take().unwrap();
    let errors = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut kept = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            if kept.len() < 20 {
                kept.push(line);
            }
        }
        kept
    });
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(done) = line.strip_prefix("done ") {
                let done: usize = done.parse().unwrap();
                if let Some((at, replica)) = kill_at.as_mut() {
                    if done >= *at {
                        replica.0.start_kill().unwrap();
                        replica.0.wait().await.unwrap();
                        println!("killed a replica after {done} outcomes");
                        kill_at = None;
                    }
                }
            } else if line.starts_with('{') {
                return serde_json::from_str::<Value>(&line).unwrap();
            }
        }
        panic!("the clients ended without their summary");
    };
    let summary = tokio::time::timeout(Duration::from_secs(600), read)
        .await
        .expect("the clients did not end in 10 minutes");
    let status = child.0.wait().await.unwrap();
    let errors = errors.await.unwrap();
    assert!(status.success(), "the clients failed: {errors:#?}");
    if !errors.is_empty() {
        println!("the clients said: {errors:#?}");
    }
    summary
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_haproxy_answer_every_call_once_when_one_is_killed() {
    let Some(tools) = mcp_tools(
        "replicas_behind_haproxy_answer_every_call_once_when_one_is_killed",
        "python",
    ) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ai-tool-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ports = [free_port(), free_port(), free_port()];
    let _a = replica("a", ports[0], &dir).await;
    let mut b = replica("b", ports[1], &dir).await;
    let _c = replica("c", ports[2], &dir).await;
    let front = free_port();
    let _balancer = Balancer::start(&dir.join("haproxy"), front, &ports);
    let url = format!("http://127.0.0.1:{front}/mcp");

    // 2026-07-28: no affinity; replica b killed after 3,000 outcomes.
    const CALLS: usize = 10_000;
    const CLIENTS: usize = 32;
    let summary = clients(
        &tools,
        &["auto", &url, &CALLS.to_string(), &CLIENTS.to_string(), "k"],
        Some((3_000, &mut b)),
    )
    .await;
    assert_eq!(summary["protocols"], serde_json::json!(["2026-07-28"]));
    let outcomes = summary["outcomes"].as_object().unwrap();
    let journal = journaled(&dir);
    assert_eq!(outcomes.len(), CALLS, "every call has one outcome");
    let mut by_replica: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed = Vec::new();
    for i in 0..CALLS {
        let key = format!("k{i}");
        let outcome = outcomes[&key].as_str().unwrap();
        let made = journal.get(&key).copied().unwrap_or(0);
        assert!(made <= 1, "{key} was deposited {made} times");
        match outcome.strip_prefix("ok ") {
            Some(replica) => {
                assert_eq!(made, 1, "{key} answered ok but not deposited");
                *by_replica.entry(replica.to_owned()).or_insert(0) += 1;
            }
            None => {
                // An error of the transport (the balancer's 502 for a request its replica died
                // under), never the tool's: the client may retry with the same key.
                assert!(!outcome.starts_with("error tool:"), "{key}: {outcome}");
                failed.push((key, outcome.to_owned()));
            }
        }
    }
    println!(
        "{CALLS} calls from {CLIENTS} clients in {:.1} s; by replica {by_replica:?}; {} failed \
         (retriable): {:?}",
        summary["seconds"].as_f64().unwrap(),
        failed.len(),
        failed.iter().take(5).collect::<Vec<_>>()
    );
    assert_eq!(
        by_replica.len(),
        3,
        "every replica answered: {by_replica:?}"
    );
    // At most the calls in flight on the killed replica fail: one per client.
    assert!(
        failed.len() <= CLIENTS,
        "{} calls failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(10)]
    );

    // 2025-11-25: a session per client, kept on its replica by `Mcp-Session-Id`.
    let summary = clients(&tools, &["legacy", &url, "2000", "32", "s"], None).await;
    assert_eq!(summary["protocols"], serde_json::json!(["2025-11-25"]));
    let outcomes = summary["outcomes"].as_object().unwrap();
    let journal = journaled(&dir);
    assert_eq!(outcomes.len(), 2000);
    for (key, outcome) in outcomes {
        assert!(
            outcome.as_str().unwrap().starts_with("ok "),
            "{key}: {outcome}"
        );
        assert_eq!(journal.get(key), Some(&1), "{key}");
    }
    drop(_balancer);
    let _ = std::fs::remove_dir_all(&dir);
}
