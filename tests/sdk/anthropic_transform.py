"""Runs Anthropic's SDK's own strict-schema transform over our anthropic-strict schemas.

    python3 tests/sdk/anthropic_transform.py FILE    # FILE: a JSON array of schemas

The SDK (PyPI anthropic, pinned by scripts/sdk-tools.sh) rewrites a schema for strict tool use
with `anthropic.lib._parse._transform.transform_schema`: what it cannot say it moves into the
description, and some forms (a list of type names) it refuses. A schema we mark strict must come
out of it unchanged, up to two edits of form alone: `type` dropped beside an `enum` or a `const`,
and `properties: {}` on an object without properties. Prints a JSON array of the schemas that
do not (their index, and the SDK's output or its error); exits 0 either way.
"""

import copy
import json
import sys

from anthropic.lib._parse._transform import transform_schema


def cosmetic(schema):
    """The schema with the SDK's edits of form made, so that only changes of meaning differ."""
    if isinstance(schema, list):
        return [cosmetic(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            # Names of properties or definitions, each with its schema.
            out[key] = {name: cosmetic(sub) for name, sub in value.items()}
        else:
            out[key] = cosmetic(value)
    if "enum" in out or "const" in out:
        out.pop("type", None)
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schemas = json.load(f)
    changed = []
    for index, schema in enumerate(schemas):
        try:
            out = transform_schema(copy.deepcopy(schema))
        except Exception as error:  # the SDK's refusal is the finding
            changed.append({"index": index, "error": repr(error)})
            continue
        if cosmetic(out) != cosmetic(schema):
            changed.append({"index": index, "sdk": out})
    print(json.dumps(changed))


main()
