//! The providers' own SDKs, installed by `scripts/sdk-tools.sh`, and running their scripts
//! (`tests/sdk/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's root.
pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
}

/// The SDKs `scripts/sdk-tools.sh` installs. `None`, with a note, only when `AI_TOOL_SDK_TOOLS`
/// is unset and the default cache is absent; when the variable is set, the SDKs must be there.
pub fn sdk_tools(test: &str) -> Option<PathBuf> {
    match std::env::var_os("AI_TOOL_SDK_TOOLS") {
        Some(dir) => {
            let python = PathBuf::from(dir).join("python");
            assert!(
                python.is_dir(),
                "AI_TOOL_SDK_TOOLS has no python/: run scripts/sdk-tools.sh"
            );
            Some(python)
        }
        None => {
            let default = workspace().join("target/sdk-tools/python");
            if default.is_dir() {
                Some(default)
            } else {
                eprintln!(
                    "note: {test} skipped: AI_TOOL_SDK_TOOLS is unset and target/sdk-tools is \
                     absent (run scripts/sdk-tools.sh)"
                );
                None
            }
        }
    }
}

/// Runs a script of `tests/sdk/` with the SDKs on its path: whether it succeeded, and what it
/// printed.
pub fn run_script(python: &Path, script: &str, args: &[String]) -> (bool, String) {
    let output = Command::new("python3")
        .arg(workspace().join("tests/sdk").join(script))
        .args(args)
        .env("PYTHONPATH", python)
        .output()
        .expect("python3 runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

/// What a script of `tests/sdk/` prints as one JSON line, run with nothing in its environment
/// but the SDKs' path and `vars`, so that the SDK finds only what the case gives it.
pub fn json_of_script(
    python: &Path,
    script: &str,
    args: &[&str],
    vars: &[(String, String)],
) -> serde_json::Value {
    let output = Command::new("python3")
        .arg(workspace().join("tests/sdk").join(script))
        .args(args)
        .env_clear()
        .env("PYTHONPATH", python)
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("python3 runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(printed.trim()).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON ({e}): {printed}{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A fresh directory for a test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ai-tool-sdk-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `a=b&c=d` (a form, or a query), percent-decoded.
pub fn decode_form(body: &str) -> BTreeMap<String, String> {
    let decode = |text: &str| {
        let bytes = text.replace('+', " ").into_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}
