"""A stdio MCP server with state, for the `umcp` binary's session, shell and tasks tests, in
the handshake era.

Tools: `count` answers how many times it was called (1, 2, ...), `pid` this process's id.
Tasks (2025-11-25): `t-1` is working and `t-2` completed; `tasks/list` lists them,
`tasks/get` and `tasks/cancel` (which cancels a working one) answer the task, and
`tasks/result` answers `t-2`'s tool result. An unknown task id is a JSON-RPC error.
"""

import json
import os
import sys

TOOLS = [
    {"name": "count", "description": "Counts its calls.", "inputSchema": {"type": "object"}},
    {"name": "pid", "description": "This server's process id.", "inputSchema": {"type": "object"}},
]

NOW = "2025-11-25T10:30:00Z"
TASKS = {
    "t-1": {"taskId": "t-1", "status": "working", "statusMessage": "reading the files",
            "createdAt": NOW, "lastUpdatedAt": NOW, "ttl": 60000, "pollInterval": 500},
    "t-2": {"taskId": "t-2", "status": "completed", "createdAt": NOW, "lastUpdatedAt": NOW,
            "ttl": None},
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


def error(id, code, message):
    send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def text(id, words):
    result(id, {"content": [{"type": "text", "text": words}]})


def main():
    calls = 0
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        id = message.get("id")
        method = message.get("method")
        params = message.get("params") or {}
        if id is None or method is None:
            continue
        task = TASKS.get(params.get("taskId"))
        if method == "initialize":
            capabilities = {"tools": {}, "tasks": {
                "list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
            result(id, {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": capabilities,
                "serverInfo": {"name": "stateful", "version": "1"},
            })
        elif method == "tools/list":
            result(id, {"tools": TOOLS})
        elif method == "tools/call" and params.get("name") == "count":
            calls += 1
            text(id, str(calls))
        elif method == "tools/call" and params.get("name") == "pid":
            text(id, str(os.getpid()))
        elif method == "tasks/list":
            result(id, {"tasks": list(TASKS.values())})
        elif method.startswith("tasks/") and task is None:
            error(id, -32602, "no task %s" % params.get("taskId"))
        elif method == "tasks/get":
            result(id, task)
        elif method == "tasks/cancel":
            if task["status"] == "working":
                task["status"] = "cancelled"
                task["statusMessage"] = "cancelled by the client"
            result(id, task)
        elif method == "tasks/result":
            meta = {"io.modelcontextprotocol/related-task": {"taskId": task["taskId"]}}
            result(id, {"content": [{"type": "text", "text": "the findings"}], "_meta": meta})
        elif method == "ping":
            result(id, {})
        else:
            error(id, -32601, "Method not found: %s" % method)


main()
