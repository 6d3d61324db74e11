#!/usr/bin/env bash
# Installs cargo-fuzz, pinned, into a cache directory, and prints the directory of its binary
# (to put on PATH). Safe to run again: what is installed is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
version="0.13.1"
# Outside the checkout, so that a fresh clone on the same machine does not build it again.
root="${AI_TOOL_CARGO_FUZZ:-${XDG_CACHE_HOME:-$HOME/.cache}/ai-tool/cargo-fuzz}/$version"
if [ ! -x "$root/bin/cargo-fuzz" ]; then
  cargo install cargo-fuzz --version "$version" --locked --root "$root" >&2
fi
echo "$root/bin"
