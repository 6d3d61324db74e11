#!/usr/bin/env bash
# Runs every test of the workspace. Installs what the tests need first.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-features --all-targets
cargo test --workspace --all-features --doc
