"""Metadata at scale (issue #21) against real brokers: the debounced topic-table write still lands on disk without
any shutdown (a SIGKILL after the window loses nothing), a clean stop flushes a burst at once, and the registrar's
incremental registrations fall back to the whole table for a name server that restarted."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from pathlib import Path

from broker.config import load_config
from broker.services.topic_config import TopicConfigTable
from namesrv.app import NamesrvApp
from protocol.bodies import TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import CreateTopicRequestHeader
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import until

REPO = Path(__file__).resolve().parents[2]


async def _create(client: RemotingClient, addr: str, topic: str) -> None:
    h = CreateTopicRequestHeader(topic, "TBW102", 2, 2, 6)
    resp = await client.invoke(addr, RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, h.to_ext_fields()))
    assert resp.code == ResponseCode.SUCCESS, resp.remark


def _persisted(store: Path) -> dict[str, object]:
    try:
        doc = json.loads((store / "config" / "topics.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    table: dict[str, object] = doc["topicConfigTable"]
    return table


async def test_topics_survive_sigkill_after_the_debounce_window(tmp_path: Path) -> None:
    store = tmp_path / "store"
    conf = tmp_path / "broker.conf"
    conf.write_text(f"listenPort=0\nbindAddress=127.0.0.1\nstorePathRootDir={store}\nlogDir={tmp_path}/logs\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "broker",
        "-c",
        str(conf),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    names = [f"KillMe{i}" for i in range(300)]
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        m = re.search(r", ([\d.]+:\d+)\] boot success", line)
        assert m is not None, line
        client = RemotingClient()
        try:
            for name in names:
                await _create(client, m.group(1), name)
        finally:
            await client.close()
        # no flush, no shutdown: the background write alone must put every acknowledged topic on disk
        await until(lambda: all(n in _persisted(store) for n in names), 30, "the debounced topics.json write")
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    cfg = load_config(None, {"storePathRootDir": store})
    table = TopicConfigTable(cfg.store.config_dir, cfg.identity, cfg.features)
    table.load()
    assert all(n in table for n in names)


async def test_clean_stop_right_after_a_burst_keeps_every_topic(tmp_path: Path) -> None:
    names = [f"Burst{i}" for i in range(500)]
    async with run_broker(None, tmp_path) as broker:
        client = RemotingClient()
        try:
            for name in names:
                await _create(client, broker.addr, name)
        finally:
            await client.close()
        # stop at once: the debounce window has not passed for the last creations
    async with run_broker(None, tmp_path) as broker:
        assert all(n in broker.topics for n in names)


async def test_incremental_registration_and_the_whole_table_for_a_restarted_namesrv(tmp_path: Path) -> None:
    async def routed(ns_app: NamesrvApp, topic: str) -> bool:
        return ns_app.route_table.route(topic) is not None

    async with run_namesrv(tmp_path / "ns1") as ns, run_broker(ns, tmp_path) as broker:
        port = int(ns.addr.rsplit(":", 1)[1])
        assert broker.registrar is not None
        broker.topics.put(TopicConfig.with_queues("Before1", 2))
        await until(lambda: routed(ns, "Before1"), what="Before1 routed")
        # a topic the name server forgot (DELETE_TOPIC_IN_NAMESRV) stays forgotten by a registration that only
        # carries the next change: the registration after a change is incremental
        assert ns.route_table.delete_topic("Before1")
        broker.topics.put(TopicConfig.with_queues("Before2", 2))
        await until(lambda: routed(ns, "Before2"), what="Before2 routed")
        assert not await routed(ns, "Before1")
        await ns.stop(grace=0.1)
        async with run_namesrv(tmp_path / "ns2", listenPort=port) as ns2:
            broker.topics.put(TopicConfig.with_queues("After", 2))
            await until(lambda: routed(ns2, "After"), what="After routed on the restarted name server")
            # a new connection: the whole table went, not just the change
            assert await routed(ns2, "Before1") and await routed(ns2, "Before2")
