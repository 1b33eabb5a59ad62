"""The official C++ client with ACL credentials against our broker (aclEnable=true) and a name server with accounts:
a PUB|SUB account produces and consumes; a wrong secret, a disallowed topic, no credentials and a SUB-only account
are refused (the client reports the failure, nothing is stored); routes stay readable for unsigned clients."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.compat.cpp_support import Consumer, acl_servers, received
from tests.compat.cpp_support import produce as cpp_produce
from tests.eventually import eventually_sync
from tests.servers import Servers, start_servers

pytestmark = pytest.mark.compat


def produce(s: Servers, topic: str, prefix: str, count: int, *creds: str) -> dict[str, Any]:
    return cpp_produce(s, topic, "sync", prefix, count, *creds)


def test_cpp_client_with_credentials(tmp_path: Path) -> None:
    with acl_servers(tmp_path) as s:
        good = ("--ak", "RocketMQ", "--sk", "12345678")
        # refused: no credentials, a wrong secret, a SUB-only account, a DENY topic
        assert produce(s, "topicA", "anon", 2) == {"event": "done", "ok": 0, "failed": 2}
        assert produce(s, "topicA", "badsk", 2, "--ak", "RocketMQ", "--sk", "wrongsecret") == {
            "event": "done",
            "ok": 0,
            "failed": 2,
        }
        assert produce(s, "topicA", "subonly", 2, "--ak", "subOnlyKey", "--sk", "12345678")["ok"] == 0
        assert produce(s, "topicD", "deny", 2, *good)["ok"] == 0
        # the PUB|SUB account produces (routes come from the name server unsigned-readable, signed here)
        assert produce(s, "topicA", "good", 10, *good) == {"event": "done", "ok": 10, "failed": 0}
        c = Consumer(s, "topicA", "groupA", "acl-consumer", "--ak", "RocketMQ", "--sk", "12345678")
        try:
            eventually_sync(
                lambda: len(received([c])) >= 10, timeout=60, what=lambda: f"10 messages, got {len(c.msgs)}"
            )
            c.drain()  # nothing refused was stored: only the good prefix ever arrives
            assert {m["keys"].split("-key-")[0] for m in c.msgs} == {"good"}
        finally:
            c.stop()
        # an unsigned C++ consumer of the same group is refused by the broker: it never gets a message
        broker_log = s.tmp / "broker.log"
        seen = len(broker_log.read_text(errors="replace"))
        anon = Consumer(s, "topicA", "groupA", "anon-consumer")
        try:
            # C++ always sends AccessKey, empty without credentials: J's "No acl config for "
            eventually_sync(
                lambda: "No acl config for" in broker_log.read_text(errors="replace")[seen:],
                timeout=30,
                what="the broker refusing the unsigned consumer",
            )
            anon.drain()
            assert anon.msgs == []
        finally:
            anon.stop()


def test_cpp_client_plain_against_a_permissive_tls_broker(tmp_path: Path) -> None:
    """tls.server.mode=permissive: the C++ client (plain) keeps producing and consuming on the TLS-capable port."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "server.pem"))
    cert.private_key_pem.write_to_path(str(tmp_path / "server.key"))
    extra = (
        f"tls.server.mode=permissive\ntls.server.certPath={tmp_path}/server.pem\n"
        f"tls.server.keyPath={tmp_path}/server.key\n"
    )
    with start_servers(tmp_path, extra) as s:
        assert produce(s, "TlsPermissive", "p", 5) == {"event": "done", "ok": 5, "failed": 0}
        c = Consumer(s, "TlsPermissive", "CG_tls_permissive", "tls-consumer")
        try:
            eventually_sync(lambda: len(received([c])) >= 5, timeout=60, what=lambda: f"5 messages, got {len(c.msgs)}")
        finally:
            c.stop()


def test_unsigned_cpp_client_reads_routes_from_a_name_server_with_accounts(tmp_path: Path) -> None:
    """Name-server accounts guard only its writes: an unmodified C++ client (no credentials) gets its routes and
    produces and consumes through a broker without ACL, while the broker (signing as an admin) is registered."""
    with acl_servers(tmp_path, broker_acl=False) as s:
        assert produce(s, "OpenRoutes", "r", 5) == {"event": "done", "ok": 5, "failed": 0}
        c = Consumer(s, "OpenRoutes", "CG_open_routes", "open-routes-consumer")
        try:
            eventually_sync(lambda: len(received([c])) >= 5, timeout=60, what=lambda: f"5 messages, got {len(c.msgs)}")
        finally:
            c.stop()
