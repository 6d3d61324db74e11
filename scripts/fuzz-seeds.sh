#!/usr/bin/env bash
# Seeds each fuzz target's corpus in DIR (default fuzz/corpus) from the committed seeds in
# fuzz/seeds/ and from the golden files: provider responses for parse_calls, declarations (one
# a line, as catalog lines) for catalog_line, and the calls' arguments for execute_text; and the
# example tools file (examples/tools.xml) for tools_xml. Safe to run again: files are named by
# their content.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${1:-fuzz/corpus}"
for target in execute_text execute_value catalog_line parse_calls render_results mcp_message \
  sse_assembler tools_xml mcp_import run_state router_answer credentials; do
  mkdir -p "$corpus/$target"
  if [ -d "fuzz/seeds/$target" ]; then
    cp -n fuzz/seeds/"$target"/* "$corpus/$target/" 2>/dev/null || true
  fi
done
python3 - "$corpus" <<'PY'
import hashlib, json, pathlib, sys

corpus = pathlib.Path(sys.argv[1])
golden = pathlib.Path("tests/golden")

def put(target, data):
    data = data.encode() if isinstance(data, str) else data
    name = hashlib.sha1(data).hexdigest()
    (corpus / target / name).write_bytes(data)

for path in sorted(golden.rglob("*.json")):
    text = path.read_text()
    put("parse_calls", text)
    value = json.loads(text)
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            put("catalog_line", json.dumps(item) + "\n{}")
for path in sorted(golden.rglob("calls.jsonl")):
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        call = json.loads(line)
        args = call.get("arguments", {}) if isinstance(call, dict) else {}
        for pick in range(6):
            put("execute_text", bytes([pick]) + json.dumps(args).encode())
# tools_xml: the first byte picks the format (0: XML).
put("tools_xml", b"\x00" + pathlib.Path("examples/tools.xml").read_bytes())
PY
