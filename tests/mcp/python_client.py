"""The official Python SDK's client (PyPI mcp==2.3.0) against the example server.

    python3 python_client.py MODE stdio CMD [ARGS...]
    python3 python_client.py MODE http URL

MODE is the SDK's `auto` (the newest protocol, falling back to `initialize`) or `legacy`
(the `initialize` handshake, 2025-11-25). Prints one line per check; exits 1 on the first
that fails. Run by tests/mcp.rs with PYTHONPATH set to the SDK's cache directory.
"""

import json
import sys

import anyio
import jsonschema
from mcp import Client, MCPError, StdioServerParameters, types


def check(condition, what, detail=""):
    if not condition:
        print(f"FAIL {what}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


async def main(mode, server):
    logged = []

    async def on_log(params):
        logged.append((params.level, params.logger, params.data))

    asked = []

    async def on_elicit(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context, params):
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Welcome, Ada!"),
            model="python-test-model",
            stop_reason="endTurn",
        )

    # The level travels in each request's `_meta` on 2026-07-28, by `logging/setLevel` before.
    async with Client(
        server,
        mode=mode,
        log_level="info",
        logging_callback=on_log,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
    ) as client:
        print(f"protocol {client.protocol_version}", flush=True)
        if mode == "legacy":
            await client.set_logging_level("info")
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        check(
            {"check", "availability", "wait", "text.upper"} <= set(tools),
            "tools/list has every tool, dotted names included",
            sorted(tools),
        )
        check_tool = tools["check"]
        check(check_tool.title == "Check a booking", "title", check_tool.title)
        check(
            check_tool.annotations is not None and check_tool.annotations.read_only_hint is True,
            "readOnlyHint",
            check_tool.annotations,
        )
        check(
            check_tool.input_schema.get("type") == "object" and "input" in check_tool.input_schema["properties"],
            "inputSchema",
            check_tool.input_schema,
        )

        output_schema = check_tool.output_schema or {}
        check(
            output_schema.get("type") == "object" and {"kind", "categories"} <= set(output_schema.get("properties", {})),
            "outputSchema from the return type",
            output_schema,
        )
        check(tools["text.upper"].output_schema is None, "no outputSchema for text", tools["text.upper"])

        # The SDK checks structuredContent against outputSchema itself, and raises if it fails.
        result = await client.call_tool(
            "check", {"input": {"code": "A1", "kind": "Room", "categories": ["Bike", "Plane"]}}
        )
        check(not result.is_error, "a call succeeds", result)
        try:
            jsonschema.validate(result.structured_content, output_schema)
            check(True, "structuredContent matches the outputSchema")
        except jsonschema.ValidationError as e:
            check(False, "structuredContent matches the outputSchema", e.message)
        check(
            result.structured_content == {"kind": "Room", "categories": 2},
            "structuredContent",
            result.structured_content,
        )
        check(
            json.loads(result.content[0].text) == result.structured_content,
            "a text block with the same JSON",
            result.content,
        )

        result = await client.call_tool("text.upper", {"text": "hello"})
        check(result.content[0].text == "HELLO", "a dotted name is called", result)

        result = await client.call_tool("check", {"input": {"code": "much too long a code", "kind": "Room", "categories": []}})
        text = result.content[0].text if result.content else ""
        check(result.is_error and "/input/code" in text, "invalid arguments are isError with the pointer", text)

        try:
            await client.call_tool("chek", {})
            check(False, "an unknown tool is a JSON-RPC error", "no error")
        except MCPError as e:
            check("check" in str(e), "an unknown tool is a JSON-RPC error naming close tools", str(e))

        reports = []

        async def on_progress(progress, total, message):
            reports.append((progress, total, message))

        result = await client.call_tool("wait", {"millis": 200}, progress_callback=on_progress)
        check(
            result.content[0].text == "waited 200 ms" and (0, 200, "waiting") in reports,
            "progress is reported",
            reports,
        )
        check(
            ("info", "wait", "waiting 200 ms") in logged and all(level != "debug" for level, _, _ in logged),
            "log messages at the level asked for, none below",
            logged,
        )

        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("wait", {"millis": 60000})
        check(scope.cancelled_caught, "a call is cancelled by the client", "it finished")
        result = await client.call_tool("wait", {"millis": 1})
        check(result.content[0].text == "waited 1 ms", "the session serves on after a cancellation", result)

        # Asking the user mid-call: a server-to-client request in 2025-11-25, an
        # `input_required` round in 2026-07-28 (the SDK answers it and calls again).
        result = await client.call_tool("book", {"day": "2026-12-01"})
        check(
            not result.is_error and result.content[0].text == "booked 2026-12-01 in Lisbon for Ada",
            "elicitation: the tool asks, the client's answer reaches it",
            result,
        )
        question = asked[-1]
        check(
            "Lisbon" in question.message and question.requested_schema["required"] == ["name"],
            "the question carries the message and the schema",
            question,
        )
        # Asking the client's model: a server-to-client request, which 2025-11-25 has.
        if mode == "legacy":
            result = await client.call_tool("welcome", {"guest": "Ada"})
            check(
                not result.is_error and result.content[0].text == "Welcome, Ada!",
                "sampling: the client's model answers the tool",
                result,
            )
            request = asked[-1]
            check(
                request.max_tokens == 60 and "Ada" in request.messages[0].content.text
                and request.system_prompt == "You write short, warm hotel welcomes.",
                "sampling/createMessage carries the messages, the system prompt and maxTokens",
                request,
            )


if __name__ == "__main__":
    mode, kind, *rest = sys.argv[1:]
    if kind == "stdio":
        server = StdioServerParameters(command=rest[0], args=rest[1:])
    else:
        server = rest[0]
    anyio.run(main, mode, server)
