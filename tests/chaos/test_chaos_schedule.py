"""The chaos suite's short schedule (``make test``; ``make chaos`` runs the full one, ``tests/chaos/run.py``): real
controller, name server and broker processes, each in its own network namespace, under two nemesis runs — kill -9
of the master (restarted later; the official C++ client produces alongside ours) and the master cut off from the
controllers while clients still reach it. Every acknowledged message must be in the final log, no ack may come from
a fenced master, each queue keeps its send order, the replicas agree, neither push consumer (ours, the official C++
client's) skips anything and committed offsets survive the failover; a new master takes writes after the fault."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.chaos.nemesis import SCENARIOS
from tests.chaos.netns import NetnsUnavailable, Network
from tests.chaos.run import run_one

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(420)]


@pytest.fixture(scope="module", autouse=True)
def _namespaces_allowed() -> None:
    if shutil.which("ip") is None:
        pytest.skip("chaos: the `ip` command (iproute2) is not installed")
    if os.geteuid() != 0:
        pytest.skip("chaos: network namespaces need root (`ip netns add` is not permitted)")
    try:
        Network.create().destroy()
    except NetnsUnavailable as exc:
        pytest.skip(f"chaos: {exc}")


@pytest.mark.parametrize(("scenario", "cpp"), [("kill-master", True), ("master-from-controllers", False)])
async def test_nemesis_run_loses_no_acknowledged_message(scenario: str, cpp: bool, tmp_path: Path) -> None:
    v = await run_one(SCENARIOS[scenario], tmp_path, cpp=cpp, hold=15.0)
    assert v.acked > 40 and (v.acked_cpp > 0) == cpp, v
    assert v.ok, f"{v.problems()} {v.notes}"
    assert not v.notes, v.notes  # a new master was elected, and all three replicas were in sync again after the heal
    assert v.unavailable and v.unavailable[0] < 60, v.unavailable
