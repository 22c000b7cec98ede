"""`ore mcp`: ORE's codebase graph as an MCP server (stdio), for any agent that speaks the Model
Context Protocol. `tools` derives the tools from the graph's table of operations and answers a
call; `server` is the only module that imports the SDK (`pip install 'ore[mcp]'`)."""

__all__: list[str] = []
