"""ali-ons 3.12.0 with ``accessKey``/``secretKey`` against our broker with ``aclEnable=true`` and a name server with
accounts: a PUB|SUB account produces and consumes; a wrong secret, a SUB-only account and a DENY topic are refused
and the client reports the AclException; routes are read unsigned-open from the name server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.compat.cpp_support import acl_servers
from tests.compat.ons_support import NEEDS_ONS, create_topic, run_node
from tests.servers import Servers

pytestmark = [pytest.mark.compat, *NEEDS_ONS]

ADMIN_CREDS = ("--accessKey", "rocketmq2", "--secretKey", "12345678")


def signed_node(s: Servers, ak: str, sk: str, *args: str, name: str) -> list[dict[str, Any]]:
    """The driver signing as ``ak``/``sk``, up to its "fatal" or "done" event."""
    return run_node(s, *args, name=name, until=("fatal", "done"), env=(f"ONS_AK={ak}", f"ONS_SK={sk}"))


def test_ons_with_credentials(tmp_path: Path) -> None:
    with acl_servers(tmp_path) as s:
        create_topic(s, "topicA", *ADMIN_CREDS)
        create_topic(s, "topicD", *ADMIN_CREDS)
        cases = [
            ("RocketMQ", "wrongSecret", "topicA", "Check signature failed for accessKey=RocketMQ"),
            ("subOnlyKey", "12345678", "topicA", "No default permission for topic:topicA"),
            ("RocketMQ", "12345678", "topicD", "No default permission for topic:topicD"),
        ]
        log = s.tmp / "broker.log"
        for ak, sk, topic, reason in cases:
            seen = len(log.read_text(errors="replace"))
            evs = signed_node(s, ak, sk, "produce", s.ns_addr, topic, "bad", "1", name=f"ons-bad-{ak}-{topic}")
            # ali-ons reports the refusal ("Send [4] times, still failed"); the broker refused it for the ACL reason
            assert evs[-1]["event"] == "fatal" and "still failed" in evs[-1]["error"], evs[-1]
            assert reason in log.read_text(errors="replace")[seen:]
        evs = signed_node(s, "RocketMQ", "12345678", "produce", s.ns_addr, "topicA", "o", "10", name="ons-good")
        assert evs[-1] == {"event": "done", "ok": 10}
        evs = signed_node(
            s, "RocketMQ", "12345678", "consume", s.ns_addr, "topicA", "groupA", "*", "10", name="ons-consume"
        )
        assert evs[-1]["event"] == "done"
        keys = {e["keys"] for e in evs if e["event"] == "msg"}
        assert keys == {f"o-key-{i}" for i in range(10)}  # nothing refused was stored
