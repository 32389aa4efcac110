"""A small MCP server built on the Python SDK (mcp 2.3.0), used by umcp's interop tests.

Usage (always binds 127.0.0.1 for the HTTP transports):

    python python_server.py [stdio]
    python python_server.py streamable-http --port N [--json-response]
    python python_server.py sse --port N

Tools: add(a, b), echo(text), long_task(steps) with progress, summarize(text) which asks the
client for sampling, confirm(question) which elicits a form, shout(message) which logs at info
and warning, add_runtime_tool(name) which adds a tool and notifies. Resources: demo://greeting, and
demo://counted (reads cacheable for a minute), counted by counted_reads_so_far() and announced
as updated by touch_counted(). Prompt: review(code).

The server speaks both protocol eras; the client's first request picks one. For the stateless
era (2026-07-28) there are tools that ask the client through resolvers, which the SDK turns
into input rounds (MRTR) there and into server requests in the handshake era:
confirm_resolved(question) elicits, summarize_resolved(text) samples; and region(region),
whose argument is mirrored into the `Mcp-Param-Region` header over HTTP.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import anyio
from typing import Annotated

from pydantic import BaseModel, Field

import mcp.types as types
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, MCPServer, Resolve, Sample

# Logging, sampling and elicitation are deprecated only from 2026-07-28 on; the tests speak
# 2025-11-25, where they are current, so the warnings are noise on the server's stderr.
warnings.filterwarnings("ignore", category=DeprecationWarning)
try:
    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
except ImportError:  # pragma: no cover - older SDKs have no such class
    pass

# The HTTP modes log at INFO so that uvicorn's "Uvicorn running on http://127.0.0.1:N" line on
# stderr tells a test when the port is open; stdio stays quiet.
server = MCPServer(
    name="umcp-python-peer",
    version="1.0.0",
    instructions="A test server for umcp interop tests.",
    log_level="WARNING" if sys.argv[1:2] in ([], ["stdio"]) else "INFO",
    # Reads may be reused for a minute in the stateless era: changes are announced.
    cache_hints={"resources/read": CacheHint(ttl_ms=60_000, scope="public")},
)

# How often demo://counted was read: a client cache shows as fewer reads.
counted_reads = 0


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Count to `steps`, reporting progress after each step.")
async def long_task(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await anyio.sleep(0.02)
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
    return f"done after {steps} steps"


@server.tool(description="Ask the client's model to summarize the text, and return its answer.")
async def summarize(text: str, ctx: Context) -> str:
    result = await ctx.session.create_message(
        messages=[
            types.SamplingMessage(
                role="user",
                content=types.TextContent(type="text", text=f"Summarize: {text}"),
            )
        ],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    content = result.content
    if isinstance(content, list):
        content = content[0] if content else None
    if isinstance(content, types.TextContent):
        return content.text
    return f"non-text sampling result: {content!r}"


class Confirmation(BaseModel):
    confirm: bool = Field(description="Whether to go ahead")
    note: str = Field(default="none", description="An optional note")


@server.tool(description="Ask the user to confirm, and return what they answered.")
async def confirm(question: str, ctx: Context) -> str:
    result = await ctx.elicit(question, Confirmation)
    if isinstance(result, AcceptedElicitation):
        return f"accepted: confirm={str(result.data.confirm).lower()} note={result.data.note}"
    return result.action


def ask_confirmation(question: str) -> Elicit[Confirmation]:
    return Elicit(question, Confirmation)


@server.tool(description="Ask the user to confirm through a resolver (an input round from 2026-07-28).")
async def confirm_resolved(
    question: str, answer: Annotated[Confirmation, Resolve(ask_confirmation)]
) -> str:
    return f"accepted: confirm={str(answer.confirm).lower()} note={answer.note}"


def ask_model(text: str) -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=f"Summarize: {text}"))
    return Sample([message], max_tokens=100)


@server.tool(description="Ask the client's model through a resolver (an input round from 2026-07-28).")
async def summarize_resolved(
    text: str, sampled: Annotated[types.CreateMessageResult, Resolve(ask_model)]
) -> str:
    content = sampled.content
    if isinstance(content, list):
        content = content[0] if content else None
    if isinstance(content, types.TextContent):
        return content.text
    return f"non-text sampling result: {content!r}"


@server.tool(description="Echo the region, which is mirrored into the Mcp-Param-Region header.")
def region(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    return f"region {region}"


@server.tool(description="Log the message at info and warning level, then return it in capitals.")
async def shout(message: str, ctx: Context) -> str:
    await ctx.info(f"info: {message}", logger_name="shout")
    await ctx.warning(f"warning: {message}", logger_name="shout")
    return message.upper()


@server.tool(description="Add a tool named `name` at run time and tell the subscribers.")
async def add_runtime_tool(name: str, ctx: Context) -> str:
    def runtime() -> str:
        return f"{name} was added at run time"

    server.add_tool(runtime, name=name, description="A tool added at run time.")
    # Stateless-era clients hear of it through subscriptions/listen, handshake-era ones
    # through the session's notification (which the SDK drops in the stateless era).
    await ctx.notify_tools_changed()
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.resource("demo://counted", name="counted", mime_type="text/plain", description="Counts its reads.")
def counted() -> str:
    global counted_reads
    counted_reads += 1
    return f"read {counted_reads} times"


@server.tool(description="How often demo://counted was read.")
def counted_reads_so_far() -> int:
    return counted_reads


@server.tool(description="Announce that demo://counted changed.")
async def touch_counted(ctx: Context) -> str:
    await ctx.notify_resource_updated("demo://counted")
    return "touched"


@server.resource("demo://greeting", name="greeting", mime_type="text/plain", description="A greeting.")
def greeting() -> str:
    return "Hello from the Python MCP server!"


@server.prompt(description="Ask for a review of a piece of code.")
def review(code: str) -> str:
    return f"Please review this code:\n\n{code}"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", nargs="?", default="stdio", choices=["stdio", "streamable-http", "sse"])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--json-response", action="store_true", help="streamable-http: reply with JSON, not SSE")
    args = parser.parse_args(argv)

    if args.transport == "stdio":
        server.run("stdio")
    elif args.transport == "streamable-http":
        server.run("streamable-http", host="127.0.0.1", port=args.port, json_response=args.json_response)
    else:
        server.run("sse", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main(sys.argv[1:])
