"""The official RocketMQ 5.x Python client (``rocketmq-python-client`` 5.1.2) with ACL credentials against
``mqbroker --enable-proxy`` with ``aclEnable=true``, all in separate processes (``grpc_driver.py``): a PUB|SUB
account sends and receives; a wrong secret, no credentials and a SUB-only account are refused (the client reports
it) and nothing they sent is stored. The Node 5.x client (uppercase hex signatures) likewise, when installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from protocol.codes import RequestCode
from tests.compat.driver_events import events
from tests.compat.grpc_support import Env, admin, msgs
from tests.servers import Proc

pytestmark = pytest.mark.compat

BROKER_CONF = ""  # the env fixture's broker: the default settings, with ACL (its admin calls signed as the admin)
ACL = True

GOOD = ("--ak", "RocketMQ", "--sk", "12345678")


def max_offsets(env: Env, topic: str) -> int:
    stats = admin(env, lambda a: a.topic_stats(env.servers.broker_addr, topic))
    return sum(int(v["maxOffset"]) for v in stats.values())


def produce(env: Env, count: int, prefix: str, *creds: str) -> dict[str, Any]:
    p = env.driver("produce", "--topic", "topicA", "--count", str(count), "--prefix", prefix, *creds, name=prefix)
    try:
        evs = events(p, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        p.stop()
    done = [e for e in evs if e["event"] == "done"]
    assert len(done) == 1
    errors = [e["error"] for e in evs if e["event"] in ("startup_failed", "send_failed")]
    return {"ok": done[0]["ok"], "failed": done[0]["failed"], "errors": errors}


def test_python_5x_client_with_credentials(env: Env) -> None:
    admin(env, lambda a: a.create_topic(env.servers.broker_addr, "topicA", 4, 4, 6, False))
    # refused: no credentials, a wrong secret, a SUB-only account; the client reports the failure
    broker_log = env.servers.tmp / "broker.log"
    for prefix, creds, reason in (
        ("anon", (), "No accessKey is configured"),
        ("badsk", ("--ak", "RocketMQ", "--sk", "wrongsecret"), "Check signature failed for accessKey=RocketMQ"),
        ("subonly", ("--ak", "subOnlyKey", "--sk", "12345678"), "No default permission for topic:topicA"),
    ):
        seen = len(broker_log.read_text(errors="replace"))
        r = produce(env, 2, prefix, *creds)
        assert r["ok"] == 0 and r["failed"] == 2 and len(r["errors"]) == 2, (prefix, r)
        # the broker refused it for the right reason (the client logs 40100 and reports a failed send)
        assert reason in broker_log.read_text(errors="replace")[seen:], prefix
    assert max_offsets(env, "topicA") == 0  # nothing refused was stored
    # the PUB|SUB account: a simple consumer of groupA receives what the producer sends
    c = env.driver("simple", "--topic", "topicA", "--group", "groupA", "--count", "5", *GOOD, name="simple-good")
    try:
        events(c, lambda ev, _s: ev["event"] in ("started", "startup_failed"), 60)
        assert produce(env, 5, "good", *GOOD) == {"ok": 5, "failed": 0, "errors": []}
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        c.stop()
    assert sorted(m["keys"] for m in msgs(evs)) == [f"good-key-{i}" for i in range(5)]
    assert max_offsets(env, "topicA") == 5
    # a consumer without credentials receives nothing: its route query is refused
    assert produce(env, 1, "later", *GOOD)["ok"] == 1
    anon = env.driver("simple", "--topic", "topicA", "--group", "groupA", "--count", "1", name="simple-anon")
    try:
        evs = events(anon, lambda ev, _s: ev["event"] == "stopped", 60)
    finally:
        anon.stop()
    assert "receive_failed" in {e["event"] for e in evs} and msgs(evs) == []


def test_python_5x_client_with_acl2_user_credentials(env: Env) -> None:
    """An ACL 2.0 user (created with the auth admin codes) signs in like an account: allowed on topicA only."""
    admin(env, lambda a: a.create_topic(env.servers.broker_addr, "topicA", 4, 4, 6, False))
    admin(env, lambda a: a.create_topic(env.servers.broker_addr, "topicE", 4, 4, 6, False))
    user = {"password": "dave-password", "userType": "Normal"}
    acl = {"policies": [{"entries": [{"resource": "Topic:topicA", "actions": ["Pub"], "decision": "Allow"}]}]}
    addr = env.servers.broker_addr
    admin(env, lambda a: a.call(addr, RequestCode.AUTH_CREATE_USER, {"username": "dave"}, json.dumps(user).encode()))
    admin(env, lambda a: a.call(addr, RequestCode.AUTH_CREATE_ACL, {"subject": "User:dave"}, json.dumps(acl).encode()))
    dave = ("--ak", "dave", "--sk", "dave-password")
    before = max_offsets(env, "topicA")
    assert produce(env, 3, "dave", *dave) == {"ok": 3, "failed": 0, "errors": []}
    assert max_offsets(env, "topicA") == before + 3
    p = env.driver("produce", "--topic", "topicE", "--count", "2", "--prefix", "dave-e", *dave, name="dave-e")
    try:
        evs = events(p, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        p.stop()
    assert next(e for e in evs if e["event"] == "done")["ok"] == 0
    assert max_offsets(env, "topicE") == 0


NODE_DRIVER = Path(__file__).with_name("node5") / "driver.js"


@pytest.mark.skipif(
    shutil.which("node") is None or not (NODE_DRIVER.parent / "node_modules" / "rocketmq-client-nodejs").is_dir(),
    reason="node or rocketmq-client-nodejs is not installed (`make node5`)",
)
def test_node_5x_client_with_credentials(env: Env) -> None:
    admin(env, lambda a: a.create_topic(env.servers.broker_addr, "topicB", 4, 4, 6, False))

    def node_produce(prefix: str, *creds: str) -> list[dict[str, Any]]:
        args = ["node", str(NODE_DRIVER), "produce", env.endpoint, "topicB", prefix, "3", *creds]
        p = Proc(args, env.servers.tmp / f"node-{prefix}.log")
        try:
            return events(p, lambda ev, _s: ev["event"] in ("stopped", "error"), 90)
        finally:
            p.stop()

    before = max_offsets(env, "topicB")
    broker_log = env.servers.tmp / "broker.log"
    seen = len(broker_log.read_text(errors="replace"))
    refused = node_produce("node-subonly", "subOnlyKey", "12345678")
    assert refused[-1]["event"] == "error" and not [e for e in refused if e["event"] == "sent"], refused[-1]
    assert "No default permission for topic:topicB" in broker_log.read_text(errors="replace")[seen:]
    assert max_offsets(env, "topicB") == before
    good = node_produce("node-good", "RocketMQ", "12345678")  # topicB=PUB for this account
    assert [e.get("ok") for e in good if e["event"] == "done"] == [3], good[-1]
    assert max_offsets(env, "topicB") == before + 3
