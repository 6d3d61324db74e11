//! What the tests of processes share: building the example server, finding the implementations
//! `scripts/mcp-tools.sh` installs, and child processes killed when the test lets go of them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The facade's features this test was built with, so that the example is built with the
/// same ones (other features would build the facade again, and then again for this test).
fn test_features() -> String {
    let features = [
        ("cli", cfg!(feature = "cli")),
        ("mcp", cfg!(feature = "mcp")),
        ("embed-candle", cfg!(feature = "embed-candle")),
        ("pgvector", cfg!(feature = "pgvector")),
    ];
    let on: Vec<&str> = features
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    on.join(",")
}

/// `examples/mcp_server.rs`, built with this test's features into this test's target
/// directory.
pub fn example_server() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| built_example("mcp_server"))
}

/// `examples/replica.rs`, built as [`example_server`] is.
pub fn example_replica() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| built_example("replica"))
}

fn built_example(name: &str) -> PathBuf {
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--features", &test_features()])
        .args(["--example", name])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .status()
        .expect("running cargo");
    assert!(status.success(), "building the {name} example failed");
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/mcp-HASH -> target/<profile>/examples/NAME
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "no {}", path.display());
    path
}

/// The implementations `scripts/mcp-tools.sh` installs (`python/`, `npm/`). `None`, with a
/// note, only when `AI_TOOL_MCP_TOOLS` is unset and the default cache lacks `part`; when the
/// variable is set, `part` must be there.
pub fn mcp_tools(test: &str, part: &str) -> Option<PathBuf> {
    match std::env::var_os("AI_TOOL_MCP_TOOLS") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(
                dir.join(part).is_dir(),
                "AI_TOOL_MCP_TOOLS={} has no {part}/: run scripts/mcp-tools.sh",
                dir.display()
            );
            Some(dir)
        }
        None => {
            let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-tools");
            if default.join(part).is_dir() {
                Some(default)
            } else {
                eprintln!(
                    "note: {test} skipped: AI_TOOL_MCP_TOOLS is unset and target/mcp-tools/{part} \
                     is absent (run scripts/mcp-tools.sh)"
                );
                None
            }
        }
    }
}

/// A child process that is killed, and waited for, when this guard is dropped: a test that
/// fails half-way leaves no server behind.
pub struct Spawned(pub Child);

impl Spawned {
    /// Starts `command` with `kill_on_drop` as a second line of defence.
    pub fn start(command: &mut Command) -> Spawned {
        let child = command.kill_on_drop(true).spawn().unwrap_or_else(|e| {
            panic!("starting {:?}: {e}", command.as_std().get_program());
        });
        Spawned(child)
    }

    /// The URL of the first `serving MCP on URL` line the process writes on standard error
    /// (it must have been piped); lines before it (from the servers it started) are skipped,
    /// and later ones read and dropped, so that no writer meets a closed pipe.
    pub async fn serving_url(&mut self) -> String {
        let stderr = self.0.stderr.take().expect("standard error is piped");
        let mut lines = BufReader::new(stderr).lines();
        let find = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("serving MCP on ") {
                    return url.to_owned();
                }
            }
            panic!("the process exited before it served");
        };
        let url = tokio::time::timeout(Duration::from_secs(30), find)
            .await
            .expect("the process did not say where it serves in 30 s");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        url
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
        // Reap it when it has already gone, so that no zombie outlives the test.
        let _ = self.0.try_wait();
    }
}

/// A port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on the port of 127.0.0.1.
pub async fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 30 s");
}

/// The example serving HTTP on a free port of 127.0.0.1 (with `MCP_TOKEN` when `token` is
/// given); its URL once it listens.
pub async fn http_example(token: Option<&str>) -> (Spawned, String) {
    let mut command = Command::new(example_server());
    command
        .args(["http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(token) = token {
        command.env("MCP_TOKEN", token);
    }
    let mut server = Spawned::start(&mut command);
    let url = server.serving_url().await;
    (server, url)
}

/// Runs a command to its end, for at most two minutes; its exit status, standard output and
/// standard error.
pub async fn run_to_end(command: &mut Command) -> (std::process::ExitStatus, String, String) {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {:?}: {e}", command.as_std().get_program()));
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{:?} hung", command.as_std().get_program()))
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status, text(out.stdout), text(out.stderr))
}
