"""The broker over damaged config files: unreadable topics.json / consumerOffset.json (and .bak) never cost the
messages — topics come back from the consume-queue directories, with a warning naming the file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from protocol.codes import ResponseCode
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import messages, pull, send


@pytest.fixture
async def client() -> AsyncIterator[RemotingClient]:
    c = RemotingClient()
    yield c
    await c.close()


async def _fill(tmp_path: Path, client: RemotingClient) -> dict[int, list[bytes]]:
    sent: dict[int, list[bytes]] = {}
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        for i in range(12):
            resp = await send(client, broker.addr, "Kept", b"m%d" % i, queue_nums=4)
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            sent.setdefault(int(resp.ext_fields["queueId"]), []).append(b"m%d" % i)
    return sent


async def _pull_all(client: RemotingClient, addr: str, qid: int) -> list[bytes]:
    resp = await pull(client, addr, "g", "Kept", qid, 0)
    assert resp.code == ResponseCode.SUCCESS, (resp.code, resp.remark)
    return [m.body for m in messages(resp)]


@pytest.mark.parametrize("bak", ["no-bak", "garbage-bak"])
async def test_garbage_topics_json_rebuilt_from_consume_queues(tmp_path: Path, client: RemotingClient, bak) -> None:
    sent = await _fill(tmp_path, client)
    cfg = tmp_path / "broker" / "config"
    (cfg / "topics.json").write_bytes(b'{"topicConfigTable": {"Kept": {\x00\xff garbage')
    if bak == "garbage-bak":
        (cfg / "topics.json.bak").write_bytes(b"\xff\xfe not json")
    else:
        (cfg / "topics.json.bak").unlink(missing_ok=True)
    with capture_logs() as logs:
        async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, autoCreateTopicEnable=False) as broker:
            for qid, bodies in sent.items():
                assert await _pull_all(client, broker.addr, qid) == bodies
            resp = await send(client, broker.addr, "Kept", b"after")
            assert resp.code == ResponseCode.SUCCESS, resp.remark
    warned = [e for e in logs if "topics rebuilt" in e["event"]]
    assert warned and warned[0]["path"].endswith("topics.json") and "Kept" in warned[0]["rebuilt"]


async def test_garbage_consumer_offsets_json(tmp_path: Path, client: RemotingClient) -> None:
    sent = await _fill(tmp_path, client)
    cfg = tmp_path / "broker" / "config"
    for name in ("consumerOffset.json", "consumerOffset.json.bak"):
        (cfg / name).write_bytes(b"\x00\x01{{{")
    with capture_logs() as logs:
        async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
            for qid, bodies in sent.items():
                assert await _pull_all(client, broker.addr, qid) == bodies
    assert any("consumer offsets unreadable" in e["event"] for e in logs)
