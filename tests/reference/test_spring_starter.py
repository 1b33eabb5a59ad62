"""rocketmq-spring-boot-starter 2.3.1 (Spring Boot 2.7, rocketmq-client 5.3.0 underneath) as its users write an app:
``RocketMQTemplate`` syncSend / asyncSend / sendOneWay and a ``@RocketMQMessageListener``
(``tests/reference/spring``), one app run per cluster, against Apache RocketMQ 5.5.0 and against rocketq."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.reference.compare import assert_same, errors, messages, sent_view
from tests.reference.conftest import Target, need
from tests.reference.peers import SPRING, Driver
from tests.reference.test_java4_client import create, on_both

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]
SPRING_HEADERS = frozenset({"id", "timestamp"})


def spring_app(t: Target, work: Path, topic: str, group: str, count: int) -> list[dict[str, Any]]:
    """One run of the app against ``t``; the JSON events it printed (Spring's own log lines are skipped)."""
    work.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        [
            "java",
            "-Xms64m",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            f"-Duser.home={work}",
            f"-Drocketmq.client.logRoot={work}/logs",
            "-cp",
            f"{SPRING}/classes:{SPRING}/lib/*",
            "rocketq.ref.SpringDriver",
            f"--rocketmq.name-server={t.ns_addr}",
            "--rocketmq.producer.group=RefSpringP",
            f"--ref.topic={topic}",
            f"--ref.group={group}",
            f"--ref.count={count}",
            "--spring.main.banner-mode=off",
            "--logging.level.root=WARN",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    (work / "app.log").write_text(out.stdout + out.stderr)
    assert out.returncode == 0, f"exit {out.returncode}; see {work / 'app.log'}"
    return [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith('{"event"')]


def test_template_sends_and_listener_receives(java4: Driver, targets: dict[str, Target], tmp_path: Path) -> None:
    need("spring")

    def run(t: Target) -> Any:
        create(java4, t, "RefSpring")
        events = spring_app(t, tmp_path / t.name, "RefSpring", "RefSpringC", 6)
        for e in events:  # Spring's message headers, new per message: their presence is compared
            if e["event"] == "msg":
                e["props"].update({k: "*" for k in SPRING_HEADERS & e["props"].keys()})
        return {"sent": sent_view(events), "got": messages(events, t.name), "errors": errors(events)}

    seen = on_both(targets, run)
    assert len(seen["apache"]["got"]) == 6 and len(seen["apache"]["sent"]) == 4 and not seen["apache"]["errors"]
    assert_same(seen)
