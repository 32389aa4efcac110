"""A scripted stdio MCP server for the `umcp` binary's tests, in the handshake era.

Usage: fake_server.py [MODE...]. Modes:
  list-error    tools/list, prompts/list and resources/list answer a JSON-RPC error
  exit-on-init  writes a line with terminal controls to stderr and exits on `initialize`
  hang=METHOD   never answers METHOD (e.g. hang=tools/list; repeatable)
  hostile       every text it sends carries terminal controls (TERMINAL): names, titles,
                descriptions, results of every content type, completions, its identity and
                instructions, error messages, and the resource updates it sends once subscribed

Tools: `hello` answers its arguments as JSON (sorted keys), `log` sends a log message full of
terminal controls, `progress` a progress notification likewise, `ask` asks the client a form
and answers with the action taken. An unknown tool is refused with an `isError` result, as
the official SDKs do. Prompts: `greet`, and `ask`, which asks as the tool does and answers
with the action taken; an unknown one is a JSON-RPC error. Resources: none listed, but
`ask:` reads as the `ask` prompt gets.
"""

import itertools
import json
import sys
import threading

MODES = set(sys.argv[1:])
QUESTIONS = itertools.count(1)
HANGS = {mode[len("hang="):] for mode in MODES if mode.startswith("hang=")}

# Clear the screen, a line that passes for umcp's own, a right-to-left override.
HOSTILE = "one\n\x1b[2Jumcp: forged \u202eline"

# A window title (OSC, ended by BEL), red text, a C1 CSI, a right-to-left override, a bidi
# isolate, a right-to-left mark, a tag character (an invisible `A`) and DEL.
TERMINAL = "\x1b]0;x\x07\x1b[31m\u009b1m\u202e\u2066\u200f\U000e0041\x7f"

# The `hostile` mode's tools: `paint` answers with a block of every content type, `bare` with
# structured content only, `fail` with a JSON-RPC error.
HOSTILE_TOOLS = [
    {
        "name": "paint",
        "title": "Paint" + TERMINAL,
        "description": "Paints." + TERMINAL + "\nsecond line",
        "inputSchema": {"type": "object"},
    },
    {"name": "bare", "description": TERMINAL, "inputSchema": {"type": "object"}},
    {"name": "fail", "inputSchema": {"type": "object"}},
    {"name": "odd" + TERMINAL, "inputSchema": {"type": "object"}},
]

TOOLS = [
    {
        "name": "hello",
        "description": "Answers its arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "on": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "pick": {"oneOf": [{"type": "null"}, {"type": "boolean"}]},
                "maybe": {"type": ["null", "number"]},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
        },
    },
    {"name": "log", "inputSchema": {"type": "object"}},
    {"name": "progress", "inputSchema": {"type": "object"}},
    {"name": "ask", "inputSchema": {"type": "object"}},
    {"name": "meta", "description": "Answers the _meta of its call.", "inputSchema": {"type": "object"}},
]


WRITING = threading.Lock()


def send(message):
    with WRITING:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def updates(uri):
    """Sends three updates of `uri` at once: the client must take an update that follows the
    answer to its `resources/subscribe` immediately."""
    for _ in range(3):
        note = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
        send(note)


def result(id, value):
    send({"jsonrpc": "2.0", "id": id, "result": value})


def error(id, code, message):
    send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def text(id, words, is_error=False):
    result(id, {"content": [{"type": "text", "text": words}], "isError": is_error})


def hostile_call(id, name):
    if name == "paint":
        content = [
            {"type": "text", "text": "painted" + TERMINAL + "\r\nline two\rover"},
            {"type": "image", "mimeType": "image/png" + TERMINAL, "data": "AAAA"},
            {"type": "audio", "mimeType": "audio/wav" + TERMINAL, "data": "AAAA"},
            {"type": "resource_link", "uri": "file:///link" + TERMINAL, "name": "l" + TERMINAL},
            {"type": "resource", "resource": {"uri": "file:///t", "text": "embedded" + TERMINAL}},
            {"type": "resource", "resource": {"uri": "file:///b" + TERMINAL, "blob": "AAAA"}},
            {"type": "hologram", "data": "unknown" + TERMINAL},
        ]
        result(id, {"content": content})
    elif name == "bare":
        result(id, {"content": [], "structuredContent": {"note": "structured" + TERMINAL}})
    else:
        error(id, -32603, "failed" + TERMINAL + "\numcp: forged")


def call(id, params, pending):
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if "hostile" in MODES and name in ("paint", "bare", "fail"):
        hostile_call(id, name)
    elif name == "hello":
        text(id, json.dumps(arguments, sort_keys=True))
    elif name == "log":
        data = {"level": "error", "logger": "fake\x1b[31m", "data": HOSTILE}
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": data})
        text(id, "logged")
    elif name == "progress":
        token = (params.get("_meta") or {}).get("progressToken")
        if token is not None:
            note = {"progressToken": token, "progress": 1, "total": 2, "message": HOSTILE}
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
        text(id, "done")
    elif name == "ask":
        ask(id, pending, lambda id, action: text(id, action))
    elif name == "meta":
        meta = dict(params.get("_meta") or {})
        meta.pop("progressToken", None)
        text(id, json.dumps(meta, sort_keys=True))
    else:
        text(id, "Unknown tool: %s" % name, is_error=True)


def ask(id, pending, answer):
    """Asks the client a form; `answer(id, action)` answers request `id` once it replies."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    question = {"mode": "form", "message": "Who are you?", "requestedSchema": schema}
    asked = "ask-%d" % next(QUESTIONS)
    send({"jsonrpc": "2.0", "id": asked, "method": "elicitation/create", "params": question})
    pending[asked] = (id, answer)


def prompt_answer(id, action):
    words = {"type": "text", "text": action}
    result(id, {"messages": [{"role": "user", "content": words}]})


def read_answer(id, action):
    result(id, {"contents": [{"uri": "ask:", "mimeType": "text/plain", "text": action}]})


def hostile(id, method, params):
    """Answers `method` as the `hostile` mode does; False for a method it leaves as usual."""
    if method == "tools/list":
        result(id, {"tools": HOSTILE_TOOLS + TOOLS})
    elif method == "resources/list":
        resource = {"uri": "file:///r" + TERMINAL, "name": "r", "description": TERMINAL + "\nmore"}
        result(id, {"resources": [resource]})
    elif method == "resources/templates/list":
        template = {"uriTemplate": "file:///{x}" + TERMINAL, "name": "t", "description": TERMINAL}
        result(id, {"resourceTemplates": [template]})
    elif method == "resources/read":
        contents = [
            {"uri": params.get("uri"), "text": "read" + TERMINAL},
            {"uri": "file:///b" + TERMINAL, "blob": "AAAA"},
        ]
        result(id, {"contents": contents})
    elif method == "resources/subscribe":
        result(id, {})
        updates(params.get("uri"))
    elif method == "prompts/list":
        prompts = [{"name": "greet", "description": "Greets." + TERMINAL}, {"name": "p" + TERMINAL}]
        result(id, {"prompts": prompts})
    elif method == "prompts/get":
        words = {"type": "text", "text": "hello" + TERMINAL}
        messages = [{"role": "user", "content": words}]
        result(id, {"description": "A greeting." + TERMINAL, "messages": messages})
    elif method == "completion/complete":
        result(id, {"completion": {"values": ["done" + TERMINAL, "plain"]}})
    elif method == "ping":
        error(id, -32603, "no ping" + TERMINAL)
    else:
        return False
    return True


def main():
    pending = {}
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        id = message.get("id")
        method = message.get("method")
        params = message.get("params") or {}
        if method is None:
            # The answer to a question of ours.
            if id in pending:
                action = (message.get("result") or {}).get("action", "error")
                asker, answer = pending.pop(id)
                answer(asker, action)
            continue
        if id is None or method in HANGS:
            continue
        if method == "initialize":
            if "exit-on-init" in MODES:
                sys.stderr.write("fatal\x1b[31m: " + HOSTILE + "\n")
                sys.stderr.flush()
                sys.exit(1)
            capabilities = {"tools": {}, "prompts": {}, "resources": {}, "logging": {}}
            answer = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": capabilities,
                "serverInfo": {"name": "fake", "version": "1"},
            }
            if "hostile" in MODES:
                capabilities["resources"] = {"subscribe": True}
                capabilities["completions"] = {}
                answer["serverInfo"]["name"] = "fake" + TERMINAL
                answer["instructions"] = "Use me.\n" + TERMINAL
            result(id, answer)
        elif method.endswith("/list") and "list-error" in MODES:
            error(id, -32603, "listing is broken")
        elif "hostile" in MODES and hostile(id, method, params):
            pass
        elif method == "tools/list":
            result(id, {"tools": TOOLS})
        elif method == "tools/call":
            call(id, params, pending)
        elif method == "prompts/list":
            result(id, {"prompts": [{"name": "greet"}, {"name": "ask"}]})
        elif method == "prompts/get" and params.get("name") == "ask":
            ask(id, pending, prompt_answer)
        elif method == "prompts/get":
            if params.get("name") != "greet":
                error(id, -32602, "Unknown prompt: %s" % params.get("name"))
            else:
                words = {"type": "text", "text": "hello"}
                result(id, {"messages": [{"role": "user", "content": words}]})
        elif method == "resources/list":
            result(id, {"resources": []})
        elif method == "resources/read" and params.get("uri") == "ask:":
            ask(id, pending, read_answer)
        elif method in ("ping", "logging/setLevel"):
            result(id, {})
        else:
            error(id, -32601, "Method not found: %s" % method)


main()
