"""Serves the Python SDK test server (python_server.py) over Streamable HTTP on a TCP port with
TLS, optionally requiring a client certificate, or on a Unix domain socket, for umcp's network
tests.

Usage (run with the venv that holds the mcp SDK):

    python network_server.py --port N --cert server.pem --key server.key [--client-ca ca.pem]
    python network_server.py --uds PATH

Prints uvicorn's "Uvicorn running on …" line when it listens.
"""

import argparse
import ssl
import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_server import server  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int)
    parser.add_argument("--uds")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--client-ca")
    args = parser.parse_args(argv)
    app = server.streamable_http_app()
    options = {"log_level": "info"}
    if args.uds:
        options["uds"] = args.uds
    else:
        options.update(host="127.0.0.1", port=args.port)
    if args.cert:
        options.update(ssl_certfile=args.cert, ssl_keyfile=args.key)
    if args.client_ca:
        options.update(ssl_ca_certs=args.client_ca, ssl_cert_reqs=ssl.CERT_REQUIRED)
    uvicorn.run(app, **options)


if __name__ == "__main__":
    main(sys.argv[1:])
