"""What the tests of the Node.js client ali-ons 3.12.0 share: the marks that skip them without node or ali-ons, its
driver (``ons/driver.js``, JSON lines) run to an event, and topic creation (ali-ons does not auto-create topics: it
stops at the name server's TOPIC_NOT_EXIST, as against a J broker)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.compat.driver_events import events
from tests.servers import REPO, Proc, Servers

ONS = Path(__file__).with_name("ons")
DRIVER = ONS / "driver.js"

NEEDS_ONS = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH"),
    pytest.mark.skipif(
        not (ONS / "node_modules" / "ali-ons").is_dir(), reason="ali-ons is not installed: run `make ons` (needs npm)"
    ),
]


def create_topic(servers: Servers, topic: str, *creds: str) -> None:
    args = ["-n", servers.ns_addr, "-c", "CompatCluster", "-t", topic, "-r", "4", "-w", "4", *creds]
    out = subprocess.run(
        [sys.executable, "-m", "client.admin", "updateTopic", *args], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def run_node(
    servers: Servers, *args: str, name: str, until: tuple[str, ...], deadline: float = 120, env: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Run the driver with ``args`` (and ``env``, ``K=V`` texts) until its first event named in ``until``; every
    event up to it. The driver is stopped either way."""
    p = Proc(["env", *env, "node", str(DRIVER), *args], servers.tmp / f"{name}.log")
    try:
        return events(p, lambda ev, _s: ev.get("event") in until, deadline)
    finally:
        p.stop()
