"""A host for umcp bridge's tests, on the official Python SDK (`mcp` 2.3): its `Client`, in the
era the plan names (`"2026-07-28"` pins the stateless era, `"legacy"` the handshake), over
stdio (it spawns the bridge) or Streamable HTTP (with a bearer token). It runs the plan's steps
and prints one JSON object with what each step saw.

Usage: python py_host.py '<plan JSON>'
  plan: { mode, stdio?: {command, args}, http?: {url, token},
          elicit?: {action, content},  steps: [ {do: "list"} | {do: "call", tool, args, progress?}
                                                 | {do: "prompt", name, args} | {do: "read", uri} ] }
Output: { protocol, server, steps: [...], elicitations: [messages] }
"""

import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
import mcp_types as types


async def run(client, step):
    if step["do"] == "list":
        listed = await client.list_tools()
        return {"tools": [t.name for t in listed.tools]}
    if step["do"] == "prompt":
        got = await client.get_prompt(step["name"], step.get("args") or {})
        return {"messages": [getattr(m.content, "text", None) for m in got.messages]}
    if step["do"] == "read":
        read = await client.read_resource(step["uri"])
        return {"contents": [getattr(c, "text", None) for c in read.contents]}
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    result = await client.call_tool(
        step["tool"],
        step.get("args") or {},
        progress_callback=on_progress if step.get("progress") else None,
    )
    text = "".join(getattr(c, "text", "") for c in result.content)
    return {"text": text, "isError": bool(result.is_error), "progress": progress}


async def main(plan):
    elicitations = []

    async def elicit(context, params):
        elicitations.append(params.message)
        return types.ElicitResult(**plan["elicit"])

    if "stdio" in plan:
        server = StdioServerParameters(command=plan["stdio"]["command"], args=plan["stdio"]["args"])
    else:
        headers = {"Authorization": "Bearer " + plan["http"]["token"]}
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        server = streamable_http_client(plan["http"]["url"], http_client=http)
    options = {"mode": plan.get("mode", "auto")}
    if "elicit" in plan:
        options["elicitation_callback"] = elicit
    steps = []
    async with Client(server, **options) as client:
        for step in plan["steps"]:
            try:
                steps.append(await run(client, step))
            except Exception as error:  # noqa: BLE001 - reported to the test, which asserts
                steps.append({"error": str(error)})
        info = client.server_info
        summary = {
            "protocol": client.protocol_version,
            "server": info.name if info else None,
            "steps": steps,
            "elicitations": elicitations,
        }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    anyio.run(main, json.loads(sys.argv[1]))
