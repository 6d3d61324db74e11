#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ (cargo-fuzz, libFuzzer) and runs each for SECONDS (default
# 60), one after the other; each input within 10 s and 2 GiB. On the stable toolchain: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its
# nightly flags. Exits non-zero at the first crash, leaving the input in fuzz/artifacts/TARGET/.
#
#   scripts/fuzz.sh [SECONDS]
#
# AI_TOOL_FUZZ_SANITIZER=address builds with AddressSanitizer (default: none, which is much
# faster to build and run; each `unsafe` block of the executor has its own unit test, and an
# AddressSanitizer run is in docs/reliability.md).
# AI_TOOL_FUZZ_CORPUS is where each target's corpus grows (default fuzz/corpus), seeded from
# fuzz/seeds and the golden files by scripts/fuzz-seeds.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
PATH="$(bash scripts/cargo-fuzz.sh):$PATH"
export PATH RUSTC_BOOTSTRAP=1
# The fuzz crate is its own workspace with flags of its own: its own target directory.
unset CARGO_TARGET_DIR
sanitizer="${AI_TOOL_FUZZ_SANITIZER:-none}"
corpus="${AI_TOOL_FUZZ_CORPUS:-$PWD/fuzz/corpus}"
targets=(execute_text execute_value catalog_line parse_calls render_results mcp_message sse_assembler
  tools_xml mcp_import run_state router_answer credentials)
# The longest input each target takes: most need no more than 8 KiB, but an entity bomb needed
# 104 KB of XML and a flood of tool calls about 60 KB of stream.
max_len() {
  case "$1" in
    tools_xml) echo 131072 ;;
    sse_assembler | mcp_import | run_state) echo 65536 ;;
    *) echo 8192 ;;
  esac
}
bash scripts/fuzz-seeds.sh "$corpus"
cargo fuzz build --sanitizer "$sanitizer"
for target in "${targets[@]}"; do
  echo "fuzzing $target for ${seconds}s" >&2
  cargo fuzz run --sanitizer "$sanitizer" "$target" "$corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
    -print_final_stats=1
done
