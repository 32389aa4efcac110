"""Writes a test certificate authority and certificates made with trustme, for umcp's network tests.

Usage: python make_certs.py DIR

Writes into DIR: ca.pem (the authority), server.pem and server.key (for 127.0.0.1 and localhost),
client.pem and client.key (a client certificate, for servers that require one), other-ca.pem (an
authority that issued neither), and expired.pem with expired.key (a server certificate for the
same names that expired in 2001).
"""

import datetime
import sys
from pathlib import Path

import trustme


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA(organization_name="umcp test CA")
    ca.cert_pem.write_to_path(str(out / "ca.pem"))
    server = ca.issue_cert("127.0.0.1", "localhost")
    server.private_key_pem.write_to_path(str(out / "server.key"))
    server.cert_chain_pems[0].write_to_path(str(out / "server.pem"))
    for extra in server.cert_chain_pems[1:]:
        extra.write_to_path(str(out / "server.pem"), append=True)
    client = ca.issue_cert("umcp-test-client")
    client.private_key_pem.write_to_path(str(out / "client.key"))
    client.cert_chain_pems[0].write_to_path(str(out / "client.pem"))
    trustme.CA(organization_name="umcp other CA").cert_pem.write_to_path(str(out / "other-ca.pem"))
    expired = ca.issue_cert(
        "127.0.0.1",
        "localhost",
        not_before=datetime.datetime(2000, 1, 1),
        not_after=datetime.datetime(2001, 1, 1),
    )
    expired.private_key_pem.write_to_path(str(out / "expired.key"))
    expired.cert_chain_pems[0].write_to_path(str(out / "expired.pem"))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
