#!/usr/bin/env bash
# Installs the providers' own SDKs, at pinned versions, into a cache directory, and prints that
# directory (for AI_TOOL_SDK_TOOLS). tests/sdk/check_wire.py checks our wire formats against
# their types (tool-providers/tests/sdk_types.rs). Safe to run again: what is installed is kept.
#   python/   PyPI openai, anthropic, google-genai, google-auth with requests (Vertex AI's
#             credentials), botocore (Bedrock Runtime's service model and AWS's credentials)
#             and mcp (the MCP specification's types), all from one pip resolution
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${AI_TOOL_SDK_TOOLS:-$PWD/target/sdk-tools}"
sdks="openai==3.57.0 anthropic==2.13.0 google-genai==3.6.1 google-auth==2.63.0 requests==2.34.2 botocore==1.44.8 mcp==2.3.0"
stamp="$(echo "$sdks" | sha256sum | cut -c1-16)"
mkdir -p "$cache"
if [ ! -f "$cache/python/.installed-$stamp" ]; then
  rm -rf "$cache/python"
  # shellcheck disable=SC2086
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$cache/python" $sdks >&2
  touch "$cache/python/.installed-$stamp"
fi
echo "$cache"
