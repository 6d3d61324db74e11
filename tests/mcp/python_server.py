"""An MCP server written with the official Python SDK (PyPI mcp==2.3.0), for tests/mcp.rs to
import tools from.

    python3 python_server.py stdio
    python3 python_server.py http PORT      # http://127.0.0.1:PORT/mcp

Its tools: `math.add` (a dotted name, structured output with an outputSchema), `shout`
(plain text), `refuse` (always an error result) and `grow`, which adds `math.double` and sends
`notifications/tools/list_changed`.
"""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("pysdk")


class Sum(BaseModel):
    total: int


@server.tool(name="math.add", title="Add two integers")
def add(a: int, b: int) -> Sum:
    """Adds two integers."""
    return Sum(total=a + b)


@server.tool()
def shout(text: str) -> str:
    """Upper-cases text."""
    return text.upper()


@server.tool()
def refuse() -> str:
    """Always fails."""
    # A ToolError's text reaches the client; other exceptions are hidden behind a generic one.
    raise ToolError("refused on purpose")


def double(n: int) -> int:
    """Doubles an integer."""
    return 2 * n


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `math.double` and tells the client the list changed."""
    server.add_tool(double, name="math.double")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
