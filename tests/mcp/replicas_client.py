"""Many clients of the official Python SDK (PyPI mcp==2.3.0) calling `deposit` through a load
balancer in front of several replicas of examples/replica.rs.

    python3 replicas_client.py MODE URL CALLS CLIENTS PREFIX

MODE is the SDK's `auto` (protocol 2026-07-28: every request stands alone) or `legacy`
(2025-11-25: a session per client, kept on one replica by the balancer). Deposit `i` has the
key `{PREFIX}{i}`; each of CLIENTS clients takes the next key until CALLS are made. Prints `done N`
every 500 outcomes, then one JSON line: each key's outcome (`ok REPLICA`, or `error KIND:
MESSAGE`), the protocol and how long the calls took. Run by tests/mcp/replicas.rs.
"""

import json
import sys
import time

import anyio
from mcp import Client

# How long one call may take before it counts as lost.
CALL_TIMEOUT_S = 30


async def main(mode, url, calls, clients, prefix):
    outcomes = {}
    protocols = set()
    next_key = iter(range(calls))
    started = time.monotonic()

    async def record(key, outcome):
        outcomes[key] = outcome
        if len(outcomes) % 500 == 0:
            print(f"done {len(outcomes)}", flush=True)

    async def worker():
        in_flight = None
        while True:
            # One client until it fails: then a new one (as an application would reconnect).
            try:
                async with Client(url, mode=mode) as client:
                    protocols.add(client.protocol_version)
                    for i in next_key:
                        key = in_flight = f"{prefix}{i}"
                        try:
                            with anyio.fail_after(CALL_TIMEOUT_S):
                                result = await client.call_tool(
                                    "deposit", {"key": key, "amount": i % 100}
                                )
                        except Exception as e:  # noqa: BLE001: every failure is an outcome
                            await record(key, f"error {type(e).__name__}: {e}")
                            break
                        text = result.content[0].text if result.content else ""
                        if result.is_error:
                            await record(key, f"error tool: {text}")
                        else:
                            await record(key, "ok " + text.rsplit(" at ", 1)[-1])
                    else:
                        return
            except Exception as e:  # noqa: BLE001: the client broke; a new one
                # A failure the SDK raised from its own tasks rather than from the call: the
                # call in flight, if any, has it as its outcome.
                if in_flight is not None and in_flight not in outcomes:
                    await record(in_flight, f"error {type(e).__name__}: {e}")
                print(f"reconnecting after {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                await anyio.sleep(0.05)

    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(worker)
    print(
        json.dumps(
            {
                "outcomes": outcomes,
                "protocols": sorted(p for p in protocols if p),
                "seconds": time.monotonic() - started,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    mode, url, calls, clients, prefix = sys.argv[1:]
    anyio.run(main, mode, url, int(calls), int(clients), prefix)
