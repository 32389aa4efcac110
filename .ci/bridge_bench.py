#!/usr/bin/env python3
"""umcp bridge and mcp-remote side by side, in one run, on the same pairs of host and server.

The host is this script: a 2025-11-25 client speaking JSON-RPC lines to the relay's stdio, as
an editor does. Each relay (`umcp bridge --url URL`, `node mcp-remote/dist/proxy.js URL`) is
started afresh for every repetition, the two taking turns (and the order swapped every other
repetition), against servers started once:

  - server-everything (the TypeScript SDK v1) over Streamable HTTP,
  - the Python SDK 2.3 server over Streamable HTTP (it speaks both eras),
  - the TypeScript SDK v2 server over Streamable HTTP, which speaks 2026-07-28 only.

Measured per repetition: start-up to the first tool list (from spawning the relay to the
`tools/list` answer, the handshake included), the median of CALLS sequential `tools/call`s, and
the relay's peak RSS (VmHWM, read from /proc before the relay is closed). Reported: the median of
each over the repetitions, and umcp's share of mcp-remote's.

Usage: bridge_bench.py --umcp PATH --mcp-remote PATH --everything PATH --python PATH
                       --python-server PATH --ts-v2 PATH [--reps N] [--calls N]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WATCHDOG = 60.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, process, name):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{name} exited before it listened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{name} did not listen on {port}")


def start_servers(args):
    """The three servers, each on a free loopback port: (name, url, tool, arguments, process)."""
    servers = []
    port = free_port()
    env = dict(os.environ, PORT=str(port))
    everything = subprocess.Popen(["node", args.everything, "streamableHttp"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, everything, "server-everything")
    servers.append(("server-everything 2026.8.31 (TS SDK v1)", f"http://127.0.0.1:{port}/mcp",
                    "echo", {"message": "hi"}, everything))
    port = free_port()
    python = subprocess.Popen([args.python, args.python_server, "streamable-http", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, python, "the Python SDK server")
    servers.append(("Python SDK 2.3 server", f"http://127.0.0.1:{port}/mcp", "echo", {"text": "hi"}, python))
    port = free_port()
    env = dict(os.environ, PORT=str(port))
    v2 = subprocess.Popen(["node", args.ts_v2], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, v2, "the TypeScript SDK v2 server")
    servers.append(("TS SDK v2 2.4 server (2026-07-28 only)", f"http://127.0.0.1:{port}/mcp",
                    "echo", {"message": "hi"}, v2))
    return servers


class Relay:
    """One relay process, spoken to in lines."""

    def __init__(self, command, home):
        env = dict(os.environ, HOME=home, XDG_STATE_HOME=os.path.join(home, "state"))
        self.started = time.perf_counter()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.watchdog = threading.Timer(WATCHDOG, self.process.kill)
        self.watchdog.start()

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def answer(self, id):
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the relay closed its output")
            message = json.loads(line)
            if message.get("id") == id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"].get("message"))
                return message["result"]

    def request(self, id, method, params):
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        return self.answer(id)

    def peak_rss_kb(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def close(self):
        self.watchdog.cancel()
        try:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def measure(command, tool, arguments, calls, home):
    """(start-up s, median call s, peak RSS KiB), or None when the relay fails the pair."""
    relay = Relay(command, home)
    try:
        params = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "clientInfo": {"name": "bench-host", "version": "1"}}
        relay.request(1, "initialize", params)
        relay.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        relay.request(2, "tools/list", {})
        started = time.perf_counter() - relay.started
        latencies = []
        for i in range(calls):
            t = time.perf_counter()
            relay.request(10 + i, "tools/call", {"name": tool, "arguments": arguments})
            latencies.append(time.perf_counter() - t)
        return started, statistics.median(latencies), relay.peak_rss_kb()
    except (RuntimeError, json.JSONDecodeError, OSError) as error:
        print(f"    {command[0]}: failed: {error}", file=sys.stderr)
        return None
    finally:
        relay.close()


def summary(samples):
    if not samples:
        return None
    return tuple(statistics.median(s[i] for s in samples) for i in range(3))


def row(pair, name, result):
    if result is None:
        return f"| {pair} | {name} | fails | fails | — |"
    started, call, rss = result
    return f"| {pair} | {name} | {started * 1000:.0f} ms | {call * 1000:.2f} ms | {rss / 1024:.1f} MB |"


def main():
    parser = argparse.ArgumentParser()
    for flag in ["--umcp", "--mcp-remote", "--everything", "--python", "--python-server", "--ts-v2"]:
        parser.add_argument(flag, required=True)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="umcp-bridge-bench-")
    servers = start_servers(args)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {args.reps} interleaved repetitions, "
          f"{args.calls} calls each", file=sys.stderr)
    lines = ["| server | relay | start-up to first tool list | per call | peak RSS |",
             "|---|---|---|---|---|"]
    try:
        for pair, url, tool, arguments, _ in servers:
            relays = {
                "umcp bridge": [args.umcp, "bridge", "--url", url],
                "mcp-remote 0.15.1": ["node", args.mcp_remote, url, "--transport", "http-only"],
            }
            samples = {name: [] for name in relays}
            for rep in range(args.reps):
                order = list(relays) if rep % 2 == 0 else list(reversed(relays))
                for name in order:
                    result = measure(relays[name], tool, arguments, args.calls, home)
                    if result is not None:
                        samples[name].append(result)
            results = {name: summary(samples[name]) for name in relays}
            for name in relays:
                lines.append(row(pair, name, results[name]))
            ours, theirs = results["umcp bridge"], results["mcp-remote 0.15.1"]
            if ours and theirs:
                print(f"{pair}: start-up {ours[0] / theirs[0]:.2f}x, per call {ours[1] / theirs[1]:.2f}x, "
                      f"peak RSS {ours[2] / theirs[2]:.2f}x of mcp-remote's", file=sys.stderr)
    finally:
        for *_, process in servers:
            process.kill()
        shutil.rmtree(home, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
