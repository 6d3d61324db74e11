//! A profile's `credential_process`: a command that prints credentials as JSON, run with a
//! time limit.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::found::{Found, Issued};
use super::profile_files::split_command;
use tool_model::ModelError;

/// How long a `credential_process` may run.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs a profile's `credential_process` and reads what it prints.
///
/// The command line is never shown in errors, since it may carry a secret; what the process
/// wrote to its standard error is, as botocore shows it.
pub(crate) async fn run_process(profile: &str, command: &str) -> Result<Found, ModelError> {
    let source = format!("the credential_process of the AWS profile `{profile}`");
    let words = split_command(command)
        .filter(|words| !words.is_empty())
        .ok_or_else(|| ModelError::Setup(format!("{source} is not a command line")))?;
    let ran = tokio::task::spawn_blocking(move || run_for_at_most(&words, PROCESS_TIMEOUT))
        .await
        .map_err(|e| ModelError::Setup(format!("{source} did not finish: {e}")))?
        .map_err(|e| ModelError::Setup(format!("{source}: {e}")))?;
    if !ran.status.success() {
        let said = String::from_utf8_lossy(&ran.stderr);
        return Err(ModelError::Setup(format!(
            "{source} failed ({}): {}",
            ran.status,
            said.trim()
        )));
    }
    read_printed(&String::from_utf8_lossy(&ran.stdout), &source)
}

/// What a `credential_process` printed, read as botocore reads it: a JSON object of `Version`
/// 1 with the keys; `source` names the process in errors.
pub(crate) fn read_printed(printed: &str, source: &str) -> Result<Found, ModelError> {
    let issued: Issued = serde_json::from_str(printed).map_err(|e| {
        let problem = crate::http::json_problem(&e);
        ModelError::Setup(format!("{source} printed no credentials JSON: {problem}"))
    })?;
    if issued.version != Some(1) {
        return Err(ModelError::Setup(format!(
            "{source} printed Version {:?}; version 1 is the one AWS defines",
            issued.version
        )));
    }
    issued.found(source)
}

/// Runs `words` (its standard input this process's, as in botocore), killed after `limit`.
fn run_for_at_most(words: &[String], limit: Duration) -> Result<Output, String> {
    let deadline = Instant::now() + limit;
    let too_long = || format!("it ran for more than {limit:?} and was stopped");
    let mut child = Command::new(&words[0])
        .args(&words[1..])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", words[0]))?;
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => {
                child.kill().ok();
                child.wait().ok();
                return Err(match other {
                    Err(e) => format!("cannot wait for it: {e}"),
                    Ok(_) => too_long(),
                });
            }
        }
    };
    let collect = |receiver: Receiver<Vec<u8>>| {
        let left = deadline.saturating_duration_since(Instant::now());
        receiver.recv_timeout(left).map_err(|_| too_long())
    };
    Ok(Output {
        status,
        stdout: collect(stdout)?,
        stderr: collect(stderr)?,
    })
}

/// A pipe read to its end on a thread of its own, so that the process never waits on a full
/// one; its bytes come through a channel, so that a pipe that a child of the process keeps
/// open holds no one past a deadline.
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.read_to_end(&mut bytes).ok();
        }
        sender.send(bytes).ok();
    });
    receiver
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_stopped_at_its_limit_and_its_output_read() {
        let words = |line: &str| split_command(line).unwrap();
        let ran = run_for_at_most(
            &words("sh -c 'echo out; echo err >&2'"),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(
            (&ran.stdout[..], &ran.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        let limit = Duration::from_millis(300);
        let error = run_for_at_most(&words("sleep 20"), limit).unwrap_err();
        assert_eq!(error, "it ran for more than 300ms and was stopped");
        // A child of the process that keeps its output open does not hold the caller either.
        let error = run_for_at_most(&words("sh -c 'sleep 3 & echo early'"), limit).unwrap_err();
        assert_eq!(error, "it ran for more than 300ms and was stopped");
        let error = run_for_at_most(&words("/nonexistent/tool"), limit).unwrap_err();
        assert!(
            error.starts_with("cannot run `/nonexistent/tool`"),
            "{error}"
        );
    }
}
