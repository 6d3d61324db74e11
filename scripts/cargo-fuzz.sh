#!/usr/bin/env bash
# Installs cargo-fuzz, pinned, into a cache directory, and prints the directory of its binary
# (to put on PATH). Safe to run again: what is installed is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
version="0.13.1"
root="${AI_TOOL_CARGO_FUZZ:-$PWD/target/cargo-fuzz}/$version"
if [ ! -x "$root/bin/cargo-fuzz" ]; then
  cargo install cargo-fuzz --version "$version" --locked --root "$root" >&2
fi
echo "$root/bin"
