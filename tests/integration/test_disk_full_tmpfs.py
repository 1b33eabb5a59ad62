"""A full disk never kills the broker (issue 34), on a real 64 MiB tmpfs: 2 runs of the scenario in
``disk_full_support`` (``bench/disk_full_chaos.py`` runs it 20 times), and a forced clean of unconsumed messages
that warns and shows in /metrics. Skipped where a tmpfs cannot be mounted (not root, no CAP_SYS_ADMIN)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.store.request import PutRequest
from protocol.bodies import TopicConfig
from tests.harness import run_broker
from tests.integration.disk_full_support import mount_tmpfs, one_run, unmount
from tests.integration.test_metrics import METRICS, scrape, value


@pytest.fixture
def tmpfs(tmp_path: Path) -> Path:
    mnt = tmp_path / "mnt"
    if not mount_tmpfs(mnt, 64):
        pytest.skip("mounting a tmpfs is not permitted here (needs root / CAP_SYS_ADMIN)")
    try:
        yield mnt  # type: ignore[misc]
    finally:
        unmount(mnt)


@pytest.mark.parametrize("run", [1, 2])
async def test_attack_fill_the_disk_with_sync_flush_sends(tmp_path: Path, tmpfs: Path, run: int) -> None:
    out = await one_run(tmp_path, tmpfs)
    assert out.died is None, f"the broker died: exit status {out.died} (-7 is SIGBUS)"
    assert out.refused > 0 and "disk is full" in out.remark, out  # SERVICE_NOT_AVAILABLE, RocketMQ's words
    assert not out.other_codes, out.other_codes
    assert out.lost == 0, f"{out.lost} acknowledged messages missing (of {out.acked})"
    assert out.resumed, "puts did not resume after 16 MiB were freed"
    assert out.acked > 300


async def test_forced_clean_of_unconsumed_messages_shows_in_metrics(tmp_path: Path) -> None:
    async with run_broker(None, tmp_path, mappedFileSizeCommitLog=64 * 1024, **METRICS) as broker:
        assert broker.store is not None and broker.metrics is not None
        broker.topics.put(TopicConfig.with_queues("FullT", 1))
        for _ in range(40):
            res = await broker.store.put_message(PutRequest("FullT", 0, 0, 0, 0, "127.0.0.1:1", b"m" * 8000, ""))
            assert res.items
        broker.offsets.commit("G1", "FullT", 0, 3)  # one group consumed 3
        assert broker.store.clean_expired(ratio=lambda: 99.0) == 1  # over diskMaxUsedSpaceRatio, not expired
        removed = broker.store.forced_clean.removed["FullT"]
        samples = await scrape(broker.metrics.port)
        name = "rocketq_store_forced_clean_messages_total"
        assert value(samples, name, topic="FullT", consumed="false") == removed - 3
        assert value(samples, name, topic="FullT", consumed="true") == 3
