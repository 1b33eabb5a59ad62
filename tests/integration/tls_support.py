"""TLS test helpers: a throw-away CA, a server certificate for 127.0.0.1/localhost and a client certificate (trustme),
written as PEM files."""

from __future__ import annotations

from pathlib import Path

import trustme


def make_pki(where: Path) -> dict[str, str]:
    """PEM paths: ``ca``, ``cert``/``key`` (server), ``ccert``/``ckey`` (client)."""
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("client.example")
    out = {
        "ca": where / "ca.pem",
        "cert": where / "server.pem",
        "key": where / "server.key",
        "ccert": where / "client.pem",
        "ckey": where / "client.key",
    }
    ca.cert_pem.write_to_path(str(out["ca"]))
    server.cert_chain_pems[0].write_to_path(str(out["cert"]))
    for pem in server.cert_chain_pems[1:]:
        pem.write_to_path(str(out["cert"]), append=True)
    server.private_key_pem.write_to_path(str(out["key"]))
    client.cert_chain_pems[0].write_to_path(str(out["ccert"]))
    client.private_key_pem.write_to_path(str(out["ckey"]))
    return {k: str(v) for k, v in out.items()}
