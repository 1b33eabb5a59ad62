"""The debounced persistence of the topic and group tables (issue #21): a burst of changes shares a bounded number
of writes, a clean flush writes what is still pending, and a table reloaded from disk sees every change."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from broker.config import load_config
from broker.persistence import TABLE_DEBOUNCE_S, JsonFile, TableWriter
from broker.services.subscription_groups import SubscriptionGroupConfig, SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from protocol.bodies import TopicConfig
from tests.eventually import eventually


def _topics(tmp_path: Path) -> TopicConfigTable:
    cfg = load_config(None, {"storePathRootDir": tmp_path})
    t = TopicConfigTable(cfg.store.config_dir, cfg.identity, cfg.features)
    t.load()
    return t


async def test_burst_of_creations_writes_a_bounded_number_of_times(tmp_path: Path) -> None:
    t = _topics(tmp_path)
    n = 2000
    t0 = time.monotonic()
    for i in range(n):
        t.put(TopicConfig.with_queues(f"Burst{i}", 4))
        await asyncio.sleep(0)  # each creation in its own loop turn, as separate requests are
    elapsed = time.monotonic() - t0
    await t.flush()
    writes = t._writer.writes
    # one write per debounce window at most, plus the flush: far fewer than one per creation
    assert 1 <= writes <= elapsed / TABLE_DEBOUNCE_S + 2
    assert writes < n / 10
    doc = json.loads((tmp_path / "config" / "topics.json").read_text())
    assert all(f"Burst{i}" in doc["topicConfigTable"] for i in range(n))


async def test_changes_inside_one_window_share_one_write(tmp_path: Path) -> None:
    f = JsonFile(tmp_path / "x.json")
    table: dict[str, int] = {}
    w = TableWriter(f, lambda: json.dumps(table).encode(), debounce=3600)
    for i in range(100):
        table[f"k{i}"] = i
        w.mark_dirty()
        await asyncio.sleep(0)
    assert w.writes == 0 and not f.path.exists()  # still inside the window
    await w.flush()  # a clean stop: the pending write happens now, and the timer is gone
    assert w.writes == 1 and json.loads(f.path.read_text()) == table
    assert w._task is None
    await w.flush()
    assert w.writes == 1  # nothing dirty: no second write


async def test_changes_during_a_write_get_a_write_of_their_own(tmp_path: Path) -> None:
    f = JsonFile(tmp_path / "x.json")
    table: dict[str, int] = {"a": 1}
    w = TableWriter(f, lambda: json.dumps(table).encode(), debounce=0.001)
    w.mark_dirty()
    await eventually(lambda: w.writes >= 1, what="the first write", step=0.001)
    table["b"] = 2
    w.mark_dirty()
    await eventually(lambda: w.writes >= 2, what="a write of its own", step=0.001)
    assert json.loads(f.path.read_text()) == {"a": 1, "b": 2}


async def test_window_grows_with_the_cost_of_a_snapshot(tmp_path: Path) -> None:
    f = JsonFile(tmp_path / "x.json")

    def slow_snapshot() -> bytes:
        end = time.perf_counter() + 0.02
        while time.perf_counter() < end:
            pass
        return b"{}"

    w = TableWriter(f, slow_snapshot, debounce=0.001, cost_factor=20)
    assert w.window() == 0.001
    w.mark_dirty()
    await w.flush()
    assert w.window() >= 20 * 0.02


async def test_clean_stop_loses_nothing(tmp_path: Path) -> None:
    t = _topics(tmp_path)
    cfg = load_config(None, {"storePathRootDir": tmp_path})
    g = SubscriptionGroupTable(cfg.store.config_dir, auto_create=True)
    g.load()
    for i in range(300):
        t.put(TopicConfig.with_queues(f"Kept{i}", 2))
        g.put(SubscriptionGroupConfig(f"CG_kept{i}"))
    await t.flush()
    await g.flush()
    t2 = _topics(tmp_path)
    g2 = SubscriptionGroupTable(cfg.store.config_dir, auto_create=True)
    g2.load()
    assert all(f"Kept{i}" in t2 for i in range(300))
    assert all(g2.get(f"CG_kept{i}") is not None for i in range(300))
    assert t2.data_version.counter > t.data_version.counter - 1


async def test_take_changed_names_the_topics_since_the_last_call(tmp_path: Path) -> None:
    t = _topics(tmp_path)
    t.take_changed()
    t.put(TopicConfig.with_queues("A", 1))
    t.create_if_absent("B", 1, 6)
    t.create_if_absent("B", 1, 6)  # exists: no change
    t.delete("A")
    assert t.take_changed() == ["A", "B"]
    assert t.take_changed() == []
    t.merge_missing({"topicConfigTable": {"C": {"topicName": "C"}}})
    assert t.take_changed() is None  # the whole table
