"""ali-ons 3.12.0 with ``accessKey``/``secretKey`` against our broker with ``aclEnable=true`` and a name server with
accounts: a PUB|SUB account produces and consumes; a wrong secret, a SUB-only account and a DENY topic are refused
and the client reports the AclException; routes are read unsigned-open from the name server."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.compat.cpp_support import acl_servers
from tests.servers import REPO, Proc, Servers

ONS = Path(__file__).with_name("ons")
DRIVER = ONS / "driver.js"

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
    pytest.mark.skipif(not (ONS / "node_modules" / "ali-ons").is_dir(), reason="ali-ons is not installed"),
]


def create_topic(s: Servers, topic: str) -> None:
    args = ["-n", s.ns_addr, "-c", "CompatCluster", "-t", topic, "-r", "4", "-w", "4"]
    creds = ["--accessKey", "rocketmq2", "--secretKey", "12345678"]
    out = subprocess.run(
        [sys.executable, "-m", "client.admin", "updateTopic", *args, *creds], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def run_node(s: Servers, ak: str, sk: str, *args: str, name: str, until: tuple[str, ...]) -> list[dict[str, Any]]:
    p = Proc(["env", f"ONS_AK={ak}", f"ONS_SK={sk}", "node", str(DRIVER), *args], s.tmp / f"{name}.log")
    out: list[dict[str, Any]] = []

    def take(line: str) -> bool:
        try:
            ev = json.loads(line)
        except ValueError:
            return False
        out.append(ev)
        return ev.get("event") in until

    try:
        p.wait_line(take, 120)
    finally:
        p.stop()
    return out


def test_ons_with_credentials(tmp_path: Path) -> None:
    with acl_servers(tmp_path) as s:
        create_topic(s, "topicA")
        create_topic(s, "topicD")
        cases = [
            ("RocketMQ", "wrongSecret", "topicA", "Check signature failed for accessKey=RocketMQ"),
            ("subOnlyKey", "12345678", "topicA", "No default permission for topic:topicA"),
            ("RocketMQ", "12345678", "topicD", "No default permission for topic:topicD"),
        ]
        log = s.tmp / "broker.log"
        for ak, sk, topic, reason in cases:
            seen = len(log.read_text(errors="replace"))
            evs = run_node(
                s,
                ak,
                sk,
                "produce",
                s.ns_addr,
                topic,
                "bad",
                "1",
                name=f"ons-bad-{ak}-{topic}",
                until=("fatal", "done"),
            )
            # ali-ons reports the refusal ("Send [4] times, still failed"); the broker refused it for the ACL reason
            assert evs[-1]["event"] == "fatal" and "still failed" in evs[-1]["error"], evs[-1]
            assert reason in log.read_text(errors="replace")[seen:]
        evs = run_node(
            s,
            "RocketMQ",
            "12345678",
            "produce",
            s.ns_addr,
            "topicA",
            "o",
            "10",
            name="ons-good",
            until=("fatal", "done"),
        )
        assert evs[-1] == {"event": "done", "ok": 10}
        evs = run_node(
            s,
            "RocketMQ",
            "12345678",
            "consume",
            s.ns_addr,
            "topicA",
            "groupA",
            "*",
            "10",
            name="ons-consume",
            until=("fatal", "done"),
        )
        assert evs[-1]["event"] == "done"
        keys = {e["keys"] for e in evs if e["event"] == "msg"}
        assert keys == {f"o-key-{i}" for i in range(10)}  # nothing refused was stored
