"""Captures the fuzz corpus from real MCP servers: the event streams and stdout bytes they
send, byte for byte.

Usage (from the repository root, after `bash tests/peers/install.sh all` and
`cargo build --example demo`):

    target/peers/py/bin/python tests/fuzz/capture.py [http] [stdio] [results]

It runs the interop peers (the Python SDK server of tests/peers/python_server.py and
@modelcontextprotocol/server-everything) over Streamable HTTP and stdio, drives a short
session with each (initialize, tool calls with progress and logging, resources, prompts,
errors), and writes what the servers sent to tests/fuzz/corpus/{sse,lines,jsonrpc}/. The
`results` part asks the Python server and the bundled demo in the stateless era (2026-07-28),
and server-everything in the handshake era, for `server/discover` (stateless only), every list
and a `resources/read`, and writes each result's text as sent to tests/fuzz/corpus/results/.
Naming parts captures only those.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
PEERS = os.path.join(ROOT, "target", "peers")
PYTHON = os.path.join(PEERS, "py", "bin", "python")
PY_SERVER = [PYTHON, os.path.join(ROOT, "tests", "peers", "python_server.py")]
EVERYTHING = [
    "node",
    os.path.join(PEERS, "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
]

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
    "clientInfo": {"name": "umcp-capture", "version": "0"},
}

PY_CALLS = [
    ("tools/list", {}),
    ("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}),
    ("tools/call", {"name": "echo", "arguments": {"text": "multi\nline \u00e9\u2603 \"quoted\""}}),
    ("tools/call", {"name": "long_task", "arguments": {"steps": 3}, "_meta": {"progressToken": "p1"}}),
    ("tools/call", {"name": "shout", "arguments": {"message": "hello"}}),
    ("tools/call", {"name": "no_such_tool", "arguments": {}}),
    ("resources/list", {}),
    ("resources/read", {"uri": "demo://greeting"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "review", "arguments": {"code": "fn main() {}"}}),
    ("no/such/method", {}),
    ("ping", {}),
]

EVERYTHING_CALLS = [
    ("tools/list", {}),
    ("tools/call", {"name": "echo", "arguments": {"message": "hi \u00fc\n\t"}}),
    ("tools/call", {"name": "get-sum", "arguments": {"a": 1, "b": 2}}),
    ("tools/call", {"name": "get-tiny-image", "arguments": {}}),
    ("tools/call", {"name": "get-structured-content", "arguments": {"location": "New York"}}),
    ("tools/call", {"name": "get-annotated-message", "arguments": {"messageType": "error", "includeImage": True}}),
    ("tools/call", {"name": "get-resource-links", "arguments": {"count": 3}}),
    (
        "tools/call",
        {"name": "trigger-long-running-operation", "arguments": {"duration": 1, "steps": 3}, "_meta": {"progressToken": 7}},
    ),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("prompts/list", {}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "args-prompt"}, "argument": {"name": "city", "value": "N"}}),
    ("logging/setLevel", {"level": "debug"}),
    ("ping", {}),
]


def write(kind: str, name: str, data: bytes) -> None:
    folder = os.path.join(CORPUS, kind)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    print(f"{kind}/{name}: {len(data)} bytes")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, deadline: float) -> None:
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port}")


def capture_http(label: str, argv: list[str], env: dict, port: int, calls) -> None:
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, time.time() + 30)
        session = None
        lines = []

        def post(n: int, message: dict) -> bytes:
            nonlocal session
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            }
            if session:
                headers["Mcp-Session-Id"] = session
            conn.request("POST", "/mcp", json.dumps(message), headers)
            resp = conn.getresponse()
            session = resp.getheader("Mcp-Session-Id") or session
            body = resp.read()
            conn.close()
            if body and "event-stream" in (resp.getheader("Content-Type") or ""):
                write("sse", f"{label}-{n:02}.txt", body)
            return body

        post(0, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        post(1, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, (method, params) in enumerate(calls, start=1):
            body = post(i + 1, {"jsonrpc": "2.0", "id": i, "method": method, "params": params})
            for line in body.split(b"\n"):
                if line.startswith(b"data:"):
                    lines.append(line[5:].strip())
        write("jsonrpc", f"{label}-http.jsonl", b"\n".join(lines) + b"\n")
    finally:
        server.terminate()
        server.wait(10)


def capture_stdio(label: str, argv: list[str], calls) -> None:
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = b""

    def send(message: dict) -> None:
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()

    def read_until(done, deadline: float) -> None:
        nonlocal out
        while not done() and time.time() < deadline:
            ready, _, _ = select.select([server.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(server.stdout.fileno(), 65536)
                if not chunk:
                    return
                out += chunk

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    read_until(lambda: b'"id":0' in out.replace(b" ", b""), time.time() + 30)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i, (method, params) in enumerate(calls, start=1):
        send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    last = f'"id":{len(calls)}'.encode()
    read_until(lambda: last in out.replace(b" ", b""), time.time() + 30)
    read_until(lambda: False, time.time() + 1.5)
    server.stdin.close()
    write("lines", f"{label}-stdout.jsonl", out)
    write("jsonrpc", f"{label}-stdio.jsonl", out)
    try:
        server.wait(5)
    except subprocess.TimeoutExpired:
        server.terminate()
        server.wait(10)


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "umcp-capture", "version": "0"},
}

RESULT_CALLS = [
    ("tools/list", {}),
    ("prompts/list", {}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
]


def capture_results(label: str, argv: list[str], uri: str, modern: bool) -> None:
    """Writes the text of each result the server sends, exactly as sent."""
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    calls = RESULT_CALLS + [("resources/read", {"uri": uri})]
    if modern:
        calls = [("server/discover", {})] + calls
    else:
        calls = [("initialize", INIT)] + calls
    try:
        for i, (method, params) in enumerate(calls):
            if modern:
                params = dict(params, _meta=MODERN_META)
            message = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
            if method == "initialize":
                notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                server.stdin.write(json.dumps(notice).encode() + b"\n")
                server.stdin.flush()
            while True:
                line = server.stdout.readline().decode()
                if not line:
                    raise SystemExit(f"{label} ended before answering {method}")
                if json.loads(line).get("id") != i:
                    continue
                start = line.find('"result":')
                if start >= 0 and method != "initialize":
                    start += len('"result":')
                    _, end = json.JSONDecoder().raw_decode(line, start)
                    name = method.replace("/", "-")
                    write("results", f"{label}-{name}.json", line[start:end].encode())
                break
    finally:
        server.stdin.close()
        server.terminate()
        server.wait(10)


def main() -> None:
    parts = set(sys.argv[1:]) or {"http", "stdio", "results"}
    if "http" in parts:
        port = free_port()
        capture_http("python-sdk", PY_SERVER + ["streamable-http", "--port", str(port)], os.environ.copy(), port, PY_CALLS)
        port = free_port()
        env = dict(os.environ, PORT=str(port))
        capture_http("server-everything", EVERYTHING + ["streamableHttp"], env, port, EVERYTHING_CALLS)
    if "stdio" in parts:
        capture_stdio("python-sdk", PY_SERVER + ["stdio"], PY_CALLS)
        capture_stdio("server-everything", EVERYTHING + ["stdio"], EVERYTHING_CALLS)
    if "results" in parts:
        capture_results("python-sdk", PY_SERVER + ["stdio"], "demo://greeting", modern=True)
        demo = os.path.join(ROOT, "target", "debug", "examples", "demo")
        capture_results("demo", [demo, "--server", "--modern"], "demo://text/readme", modern=True)
        capture_results("server-everything", EVERYTHING + ["stdio"], "demo://resource/static/document/architecture.md", modern=False)


if __name__ == "__main__":
    sys.exit(main())
