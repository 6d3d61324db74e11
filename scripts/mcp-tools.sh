#!/usr/bin/env bash
# Installs the MCP implementations the tests run against, at pinned versions, into a cache
# directory, and prints that directory (for AI_TOOL_MCP_TOOLS). Safe to run again: what is
# installed is kept.
#   python/   PyPI mcp==2.3.0, the official Python SDK (client and server)
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${AI_TOOL_MCP_TOOLS:-$PWD/target/mcp-tools}"
python_sdk="mcp==2.3.0"
mkdir -p "$cache"
if [ ! -f "$cache/python/.installed-$python_sdk" ]; then
  rm -rf "$cache/python"
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$cache/python" "$python_sdk" >&2
  touch "$cache/python/.installed-$python_sdk"
fi
echo "$cache"
