"""The official Python SDK's client (PyPI mcp==2.3.0) calling a tool our server runs as an MCP
task (the tasks extension of protocol 2026-07-28, `io.modelcontextprotocol/tasks`).

    python3 python_tasks.py URL

The SDK has the extension machinery but no tasks client: this file is one, as a user of the
SDK would write it (a `ClientExtension` claiming `resultType: "task"` and polling `tasks/get`).
Prints one line per check; exits 1 on the first that fails. Run by tests/mcp/processes.rs.
"""

import sys
from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"


def check(condition, what, detail=""):
    if not condition:
        print(f"FAIL {what}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


class TaskCreated(Result):
    """A `tools/call` answered with a task."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(Result):
    """What `tasks/get` says of a task."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class Acknowledged(Result):
    model_config = ConfigDict(extra="allow")


created = []
messages = []


async def ended(session, task):
    """Polls `task` until it ends; its last state."""
    for _ in range(400):
        await anyio.sleep(min(task.poll_interval_ms or 500, 100) / 1000)
        state = await session.send_request(GetTask(params=TaskParams(task_id=task.task_id)), TaskState)
        if state.status_message:
            messages.append(state.status_message)
        if state.status not in ("working", "input_required"):
            return state
    raise RuntimeError(f"task {task.task_id} did not end")


async def resolve(task: TaskCreated, ctx: ClaimContext) -> CallToolResult:
    created.append(task)
    state = await ended(ctx.session, task)
    if state.status != "completed":
        raise RuntimeError(f"the task ended {state.status}: {state.error}")
    return CallToolResult.model_validate(state.result)


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=resolve)]


async def main(url):
    async with Client(url, mode="auto", extensions=[Tasks()]) as client:
        check(client.protocol_version == "2026-07-28", "protocol 2026-07-28", client.protocol_version)
        result = await client.call_tool("report", {"month": "May", "millis": 300})
        check(len(created) == 1 and len(created[0].task_id) == 32, "tools/call answered with a task", created)
        check(created[0].ttl_ms and created[0].ttl_ms > 0, "the task has a time to live", created[0])
        check(
            not result.is_error and result.content[0].text == "Lisbon: the report for May is ready",
            "polled to its result",
            result,
        )
        check("1/2: adding up the bookings" in messages, "its progress is its status message", messages)

        # Cancelled: the raw task, then tasks/cancel.
        raw = await client.session.call_tool("report", {"month": "June", "millis": 60000}, allow_claimed=True)
        check(isinstance(raw, TaskCreated), "a claimed task, raw", raw)
        await client.session.send_request(CancelTask(params=TaskParams(task_id=raw.task_id)), Acknowledged)
        state = await ended(client.session, raw)
        check(state.status == "cancelled", "tasks/cancel cancels it", state)

        # A tool that is no task is answered at once.
        result = await client.call_tool("availability", {"day": "2026-05-01"})
        check(result.content[0].text == "Lisbon on 2026-05-01: 3 free", "a plain tool answers at once", result)
        check(len(created) == 1, "no task for it", created)

    # Without the extension, the task tool is answered when the call ends.
    async with Client(url, mode="auto") as client:
        result = await client.call_tool("report", {"month": "July", "millis": 10})
        check(result.content[0].text == "Lisbon: the report for July is ready", "no tasks, a plain answer", result)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
