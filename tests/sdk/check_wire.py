"""Checks wire-format JSON against the providers' own SDK types.

    python3 tests/sdk/check_wire.py                 # every golden file of the repository
    python3 tests/sdk/check_wire.py KIND=FILE ...   # these files, each as its KIND (see kinds())

The SDKs come from PyPI, pinned by scripts/sdk-tools.sh (AI_TOOL_SDK_TOOLS on PYTHONPATH):
openai and anthropic (request parameters as TypedDicts, responses as pydantic models),
google-genai (pydantic models that refuse unknown fields), botocore (the Bedrock Runtime service
model and its parameter validator) and mcp (the MCP specification's types).

Request parameters are checked strictly: every key must be one the SDK's type declares, every
required key present, every value of a declared type. Responses are checked as the SDKs read
them, which allows fields they do not know. Prints one line per problem, with the file and the
path in it, and exits 1 when there is one.
"""

import glob
import json
import os
import sys
import types as pytypes
import typing

import typing_extensions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------------------------------------
# A strict check of a value against the TypedDict parameter types of the OpenAI and Anthropic
# SDKs. pydantic cannot be used for these: it ignores unknown keys of a TypedDict and reads an
# `Iterable` lazily, so a misspelt key or a bad message would pass.


class Mismatch(Exception):
    def __init__(self, path, message):
        super().__init__(f"{path or '/'}: {message}")
        self.path = path


def _alias(annotation):
    while typing.get_origin(annotation) in (typing_extensions.Required, typing_extensions.NotRequired):
        annotation = typing.get_args(annotation)[0]
    for meta in getattr(annotation, "__metadata__", ()):
        alias = getattr(meta, "alias", None)
        if alias:
            return alias
    return None


def _strip(tp):
    while True:
        origin = typing.get_origin(tp)
        if origin in (typing_extensions.Annotated, typing.Annotated):
            tp = typing.get_args(tp)[0]
        elif origin in (typing_extensions.Required, typing_extensions.NotRequired):
            tp = typing.get_args(tp)[0]
        elif isinstance(tp, typing_extensions.TypeAliasType):
            tp = tp.__value__
        else:
            return tp


def _hints(cls):
    """The keys of a TypedDict as they appear on the wire: name -> (type, required)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    keys = {}
    for name, annotation in hints.items():
        wire = _alias(annotation) or name
        keys[wire] = (annotation, _required(cls, name, annotation))
    return keys


def _required(cls, name, annotation):
    """Whether a TypedDict's key is required. The SDKs' modules postpone annotations, so the
    class's own `__required_keys__` cannot see `Required[..]`: read it from the resolved hint,
    else from the `total` of the class that declares the key."""
    total = _declaring_total(cls, name)
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing_extensions.Required:
            return True
        if origin is typing_extensions.NotRequired:
            return False
        if origin in (typing_extensions.Annotated, typing.Annotated):
            annotation = typing.get_args(annotation)[0]
            continue
        return total


def _declaring_total(cls, name):
    """The `total` of the class that declares the key. Each TypedDict's `__annotations__` holds
    its bases' keys too, so the declaring class is the most basic one that has it (the bases
    are in `__orig_bases__`, not in the MRO)."""
    for base in getattr(cls, "__orig_bases__", ()):
        if typing_extensions.is_typeddict(base):
            found = _declaring_total(base, name)
            if found is not None:
                return found
    if name in cls.__dict__.get("__annotations__", {}):
        return getattr(cls, "__total__", True)
    return None


def _tag_matches(value, option):
    """Whether `option` is a TypedDict whose tags (`type`, `role`) are the value's."""
    option = _strip(option)
    if not (isinstance(value, dict) and typing_extensions.is_typeddict(option)):
        return False
    hints = typing.get_type_hints(option, include_extras=True)
    tags = [key for key in ("type", "role") if key in value and key in hints]
    return bool(tags) and all(value[key] in typing.get_args(_strip(hints[key])) for key in tags)


SEQUENCES = {list, tuple, typing.Iterable, typing.Sequence}
try:
    import collections.abc as abc

    SEQUENCES |= {abc.Iterable, abc.Sequence}
except ImportError:  # pragma: no cover
    pass


def check_typed(value, tp, path=""):
    tp = _strip(tp)
    if tp is typing.Any or tp is object:
        return
    if tp is type(None) or tp is None:
        if value is not None:
            raise Mismatch(path, f"expected null, got {json.dumps(value)[:60]}")
        return
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, pytypes.UnionType):
        failures = []
        for option in args:
            try:
                check_typed(value, option, path)
                return
            except Mismatch as mismatch:
                failures.append(mismatch)
        # The branch the value was meant for: the one its `type` tag names, else the one that
        # got deepest.
        tagged = [m for m, option in zip(failures, args) if _tag_matches(value, option)]
        deepest = max(tagged or failures, key=lambda m: m.path.count("/"))
        if deepest.path != path:  # it got further than the union itself
            raise deepest
        shown = json.dumps(value)[:80]
        raise Mismatch(path, f"{shown} matches none of {len(args)} types ({failures[0]})")
    if origin in (typing.Literal, typing_extensions.Literal):
        if value not in args or isinstance(value, bool) != any(isinstance(a, bool) for a in args):
            raise Mismatch(path, f"{json.dumps(value)} is not one of {list(args)}")
        return
    if typing_extensions.is_typeddict(tp):
        if not isinstance(value, dict):
            raise Mismatch(path, f"expected an object ({tp.__name__}), got {type(value).__name__}")
        keys = _hints(tp)
        for key in value:
            if key not in keys:
                raise Mismatch(f"{path}/{key}", f"not a field of {tp.__name__}")
        for key, (annotation, required) in keys.items():
            if key in value:
                check_typed(value[key], annotation, f"{path}/{key}")
            elif required:
                raise Mismatch(f"{path}/{key}", f"required by {tp.__name__}, missing")
        return
    if origin in SEQUENCES or tp in (list, tuple) or getattr(tp, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            raise Mismatch(path, f"expected an array, got {type(value).__name__}")
        item = args[0] if args else typing.Any
        for i, element in enumerate(value):
            check_typed(element, item, f"{path}/{i}")
        return
    if origin in (dict, typing.Dict, typing.Mapping, abc.Mapping) or tp is dict:
        if not isinstance(value, dict):
            raise Mismatch(path, f"expected an object, got {type(value).__name__}")
        item = args[1] if len(args) == 2 else typing.Any
        for key, element in value.items():
            check_typed(element, item, f"{path}/{key}")
        return
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is str:
        ok = isinstance(value, str)
    elif tp is bytes:
        ok = isinstance(value, str)
    else:
        # A file upload, an httpx type, a pydantic model: not in anything we send.
        raise Mismatch(path, f"unexpected SDK type {tp!r}")
    if not ok:
        raise Mismatch(path, f"expected {tp.__name__}, got {json.dumps(value)[:60]}")


# ---------------------------------------------------------------------------------------------
# The kinds of document, each with its check.


def typed(tp):
    return lambda value: check_typed(value, tp)


def typed_list(tp):
    return lambda value: check_typed(value, typing.List[tp])


def model(cls):
    return lambda value: cls.model_validate(value)


def adapter(tp):
    from pydantic import TypeAdapter

    checker = TypeAdapter(tp)
    return lambda value: checker.validate_python(value)


def model_list(cls):
    def check(value):
        if not isinstance(value, list):
            raise Mismatch("", "expected an array")
        for item in value:
            cls.model_validate(item)

    return check


def gemini_request(value):
    """A `generateContent` body: the REST fields, each checked with the SDK's type for it."""
    from google.genai import types as g

    fields = {
        "contents": lambda v: [g.Content.model_validate(c) for c in v],
        "systemInstruction": g.Content.model_validate,
        "tools": lambda v: [g.Tool.model_validate(t) for t in v],
        "toolConfig": g.ToolConfig.model_validate,
        "generationConfig": g.GenerationConfig.model_validate,
        "safetySettings": lambda v: [g.SafetySetting.model_validate(s) for s in v],
        "cachedContent": _string("/cachedContent"),
    }
    for key, item in value.items():
        if key not in fields:
            raise Mismatch(f"/{key}", "not a field of a generateContent request")
        fields[key](item)
    if "contents" not in value:
        raise Mismatch("/contents", "required, missing")


def _string(path):
    def check(value):
        if not isinstance(value, str):
            raise Mismatch(path, "expected a string")

    return check


def gemini_contents(value):
    from google.genai import types as g

    for content in value if isinstance(value, list) else [value]:
        g.Content.model_validate(content)


def bedrock_input(shape_name, operation="Converse"):
    """A part of a Converse request, checked by botocore's own parameter validator. A whole
    request is a body: the model id goes in the path, so it must not be in the body."""

    def check(value):
        import botocore.session
        from botocore.validate import ParamValidator

        service = botocore.session.get_session().get_service_model("bedrock-runtime")
        converse = service.operation_model(operation).input_shape
        params = {"modelId": "model", "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
        if shape_name == "request":
            if not isinstance(value, dict):
                raise Mismatch("", "expected an object")
            if "modelId" in value:
                raise Mismatch("/modelId", "the model id goes in the path, not the body")
            params = dict(value, modelId="model")
        elif shape_name == "tools":
            params["toolConfig"] = {"tools": value}
        elif shape_name == "message":
            params["messages"] = [params["messages"][0], {"role": "assistant", "content": [{"text": "ok"}]}, value]
        report = ParamValidator().validate(_bedrock_blobs(params), converse)
        if report.has_errors():
            raise Mismatch("", report.generate_report())
        # botocore's validator checks types, required members and unknown ones, not enums
        # (an image's `format`, a result's `status`): the service model's walk does.
        walk_shape(params, converse, "")

    return check


def _bedrock_blobs(value):
    """JSON carries a blob (image bytes) as base64 text; boto takes bytes."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "bytes" and isinstance(item, str):
                out[key] = item.encode()
            elif key == "json":
                out[key] = item  # a document: any JSON
            else:
                out[key] = _bedrock_blobs(item)
        return out
    if isinstance(value, list):
        return [_bedrock_blobs(v) for v in value]
    return value


def bedrock_response(value):
    """A Converse response, walked along the service model's output shape."""
    import botocore.session

    service = botocore.session.get_session().get_service_model("bedrock-runtime")
    walk_shape(value, service.operation_model("Converse").output_shape, "")


def bedrock_stream_events(events):
    """Streamed Converse events, each `{"<event>": payload}` as boto3 gives them, walked along
    the service model's `ConverseStreamOutput` event stream."""
    import botocore.session

    service = botocore.session.get_session().get_service_model("bedrock-runtime")
    stream = service.operation_model("ConverseStream").output_shape.members["stream"]
    for i, event in enumerate(events):
        if not isinstance(event, dict) or len(event) != 1:
            raise Mismatch(f"/{i}", "an event is one object of one member, its type")
        name, payload = next(iter(event.items()))
        if name not in stream.members:
            raise Mismatch(f"/{i}/{name}", f"not an event of {stream.name}")
        walk_shape(payload, stream.members[name], f"/{i}/{name}")


def bedrock_event_lines(text):
    """A golden stream: one event per line, as JSON."""
    bedrock_stream_events([json.loads(line) for line in text.splitlines() if line.strip()])


bedrock_event_lines.reads_text = True


def bedrock_event_stream(data):
    """The bytes of an AWS event stream, read by botocore's own parser (which checks lengths
    and CRCs); every message must be a JSON event, then checked as one."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(data)
    events = []
    for i, message in enumerate(buffer):
        headers = message.headers
        if headers.get(":message-type") != "event" or headers.get(":content-type") != "application/json":
            raise Mismatch(f"/{i}", f"not a JSON event: headers {headers}")
        events.append({headers[":event-type"]: json.loads(message.payload)})
    if buffer._data:
        raise Mismatch(f"/{len(events)}", f"{len(buffer._data)} bytes after the last message")
    bedrock_stream_events(events)


bedrock_event_stream.reads_bytes = True


def walk_shape(value, shape, path):
    kind = shape.type_name
    if kind == "structure":
        if getattr(shape, "is_document_type", False):
            return
        if not isinstance(value, dict):
            raise Mismatch(path, f"expected an object ({shape.name})")
        for key, item in value.items():
            if key not in shape.members:
                raise Mismatch(f"{path}/{key}", f"not a member of {shape.name}")
            walk_shape(item, shape.members[key], f"{path}/{key}")
        for key in shape.required_members:
            if key not in value:
                raise Mismatch(f"{path}/{key}", f"required by {shape.name}, missing")
        if shape.metadata.get("union") and len(value) != 1:
            raise Mismatch(path, f"{shape.name} is a union: exactly one member, got {len(value)}")
    elif kind == "list":
        if not isinstance(value, list):
            raise Mismatch(path, "expected an array")
        for i, item in enumerate(value):
            walk_shape(item, shape.member, f"{path}/{i}")
    elif kind == "map":
        if not isinstance(value, dict):
            raise Mismatch(path, "expected an object")
    elif kind == "string":
        if not isinstance(value, str):
            raise Mismatch(path, "expected a string")
        if shape.enum and value not in shape.enum:
            raise Mismatch(path, f"{value!r} is not one of {shape.enum}")
    elif kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise Mismatch(path, "expected an integer")
    elif kind in ("double", "float"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise Mismatch(path, "expected a number")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise Mismatch(path, "expected a boolean")


def sse(check_event, skipped=()):
    """Server-sent events: each `data:` line's JSON checked as an event, but `[DONE]` and the
    event types the SDK skips itself (`skipped`, such as Anthropic's `ping`)."""

    def check(text):
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith("data:"):
                data = line[5:].strip()
                if data == "[DONE]" or json.loads(data).get("type") in skipped:
                    continue
                try:
                    check_event(json.loads(data))
                except Mismatch as mismatch:
                    raise Mismatch(f"line {number}{mismatch.path}", str(mismatch)) from None
                except Exception as error:
                    raise Mismatch(f"line {number}", _shown(error)) from None

    check.reads_text = True
    return check


def strict_model(cls):
    """An MCP model, validated, and also refusing keys it does not declare: the MCP SDK's
    models ignore unknown keys and take field names beside the wire's camelCase aliases."""

    def check(value):
        cls.model_validate(value)
        _known_keys(value, cls, "")

    return check


def _models_in(annotation):
    """The pydantic model classes an annotation can hold (through Optional, unions, lists)."""
    import pydantic

    annotation = _strip(annotation)
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    found = []
    for arg in typing.get_args(annotation):
        found += _models_in(arg)
    return found


def _known_keys(value, cls, path):
    if not isinstance(value, dict):
        return
    fields = {(f.alias or name): f for name, f in cls.model_fields.items()}
    for key, item in value.items():
        if key not in fields:
            if cls.model_config.get("extra") == "allow":
                continue
            raise Mismatch(f"{path}/{key}", f"not a field of {cls.__name__}")
        models = _models_in(fields[key].annotation)
        if isinstance(item, list):
            for i, element in enumerate(item):
                _one_of(element, models, f"{path}/{key}/{i}")
        else:
            _one_of(item, models, f"{path}/{key}")


def _one_of(value, models, path):
    """The value's keys are those of one of `models` (any value when there are none)."""
    failures = []
    for model in models:
        try:
            _known_keys(value, model, path)
            return
        except Mismatch as mismatch:
            failures.append(mismatch)
    if failures:
        raise max(failures, key=lambda m: m.path.count("/"))


def strict_model_list(cls):
    check_one = strict_model(cls)

    def check(value):
        if not isinstance(value, list):
            raise Mismatch("", "expected an array")
        for item in value:
            check_one(item)

    return check


def mcp_call_request(value):
    from mcp import types as m

    m.JSONRPCRequest.model_validate(value)
    m.CallToolRequest.model_validate({"method": value["method"], "params": value["params"]})


def kinds():
    from anthropic.types import beta as anthropic_beta
    from anthropic.types import message_create_params as anthropic_params
    import anthropic.types as a
    from google.genai import types as g
    from mcp import types as m
    from openai.types import chat as oc
    from openai.types import responses as orr
    from openai.types.chat import completion_create_params as chat_params
    from openai.types.responses import response_create_params as responses_params

    return {
        # The agent loop's HTTP requests, whole.
        "openai-chat.request": typed(chat_params.CompletionCreateParamsNonStreaming),
        "openai-chat.stream-request": typed(chat_params.CompletionCreateParamsStreaming),
        "openai-responses.request": typed(responses_params.ResponseCreateParamsNonStreaming),
        "openai-responses.stream-request": typed(responses_params.ResponseCreateParamsStreaming),
        "anthropic.request": typed(anthropic_params.MessageCreateParamsNonStreaming),
        "anthropic.stream-request": typed(anthropic_params.MessageCreateParamsStreaming),
        "gemini.request": gemini_request,
        "gemini.stream-request": gemini_request,
        "bedrock.request": bedrock_input("request"),
        "bedrock.stream-request": bedrock_input("request", "ConverseStream"),
        # What the model sends back.
        "openai-chat.response": model(oc.ChatCompletion),
        "openai-chat.stream": sse(model(oc.ChatCompletionChunk)),
        "openai-responses.response": model(orr.Response),
        "openai-responses.stream": sse(adapter(orr.ResponseStreamEvent)),
        "anthropic.response": model(a.Message),
        "anthropic.stream": sse(adapter(a.RawMessageStreamEvent), skipped=("ping",)),
        "gemini.response": model(g.GenerateContentResponse),
        "gemini.stream": sse(model(g.GenerateContentResponse)),
        "bedrock.response": bedrock_response,
        "bedrock.stream": bedrock_event_lines,
        "bedrock.event-stream": bedrock_event_stream,
        # tool-core's renderings: a request's tools, and the results of calls.
        "openai-chat.tools": typed_list(oc.ChatCompletionToolUnionParam),
        "openai-chat.results": typed_list(oc.ChatCompletionMessageParam),
        "openai-responses.tools": typed_list(orr.ToolParam),
        "openai-responses.results": typed_list(orr.ResponseInputItemParam),
        "anthropic.tools": typed_list(anthropic_beta.BetaToolUnionParam),
        "anthropic.results": typed(a.MessageParam),
        "gemini.tools": model_list(g.Tool),
        "gemini.results": gemini_contents,
        "bedrock.tools": bedrock_input("tools"),
        "bedrock.results": bedrock_input("message"),
        "mcp.tools": strict_model_list(m.Tool),
        "mcp.results": strict_model_list(m.CallToolResult),
        "mcp.call": mcp_call_request,
    }


# The repository's golden files and what each is.
GOLDEN = [
    ("tool-providers/tests/golden/{api}/request-*.json", "{api}.request"),
    ("tool-providers/tests/golden/{api}/stream-request-*.json", "{api}.stream-request"),
    ("tool-providers/tests/golden/{api}/response-*.json", "{api}.response"),
    ("tool-providers/tests/golden/{api}/stream-*.sse", "{api}.stream"),
    ("tool-providers/tests/golden/{api}/stream-*.jsonl", "{api}.stream"),
    ("tests/golden/{api}/declarations*.json", "{api}.tools"),
    ("tests/golden/{api}/hosted/declarations.json", "{api}.tools"),
    ("tests/golden/{api}/results.json", "{api}.results"),
    ("tests/golden/{api}/rich-results.json", "{api}.results"),
    ("tests/golden/{api}/hosted/results-rendered.json", "{api}.results"),
    ("tests/golden/{api}/response.json", "{api}.response"),
    ("tests/golden/{api}/hosted/response.json", "{api}.response"),
]
APIS = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "mcp"]


def golden_files():
    for pattern, kind in GOLDEN:
        for api in APIS:
            for path in sorted(glob.glob(os.path.join(ROOT, pattern.format(api=api)))):
                name = kind.format(api=api)
                if api == "mcp" and name == "mcp.response":
                    name = "mcp.call"
                yield name, path


def _meant(errors):
    """Of a union's errors, those of the members whose `type` tag matched (all when none did)."""
    wrong = set()
    for e in errors:
        loc = e["loc"]
        if loc and loc[-1] == "type" and e["type"] == "literal_error":
            wrong.add(loc[:-1])
    kept = [e for e in errors if not any(e["loc"][: len(w)] == w for w in wrong)]
    return kept or errors


def _shown(error):
    """A pydantic error as its first few problems, each `location: message`."""
    errors = getattr(error, "errors", None)
    if errors is None:
        return " ".join(str(error).split())
    found = _meant(error.errors())
    shown = [f"/{'/'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in found[:4]]
    more = f" (and {len(found) - 4} more)" if len(found) > 4 else ""
    return "; ".join(shown) + more


def check_file(checks, kind, path):
    check = checks[kind]
    if getattr(check, "reads_bytes", False):
        with open(path, "rb") as file:
            data = file.read()
    else:
        with open(path, encoding="utf-8") as file:
            data = file.read()
    try:
        check(data if getattr(check, "reads_text", False) or getattr(check, "reads_bytes", False) else json.loads(data))
    except Mismatch as mismatch:
        return str(mismatch)
    except Exception as error:  # pydantic's ValidationError, a JSON error
        return _shown(error)
    return None


def main(argv):
    checks = kinds()
    if argv:
        files = [tuple(arg.split("=", 1)) for arg in argv]
        for pair in files:
            if len(pair) != 2 or pair[0] not in checks:
                print(f"not KIND=FILE of a known kind: {pair[0]!r}; kinds: {', '.join(sorted(checks))}")
                return 2
    else:
        files = list(golden_files())
    problems = 0
    for kind, path in files:
        problem = check_file(checks, kind, path)
        shown = os.path.relpath(path, ROOT) if path.startswith(ROOT) else path
        if problem:
            problems += 1
            print(f"FAIL {shown} ({kind}): {problem}")
        else:
            print(f"ok   {shown} ({kind})")
    print(f"{len(files)} files, {problems} with problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
