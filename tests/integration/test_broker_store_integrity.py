"""The broker over damaged config files: unreadable topics.json / consumerOffset.json (and .bak) never cost the
messages — topics come back from the consume-queue directories, with a warning naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from protocol.codes import ResponseCode
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import messages, pull, send
from tests.integration.test_mqadmin import mqadmin


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


async def test_damaged_record_skipped_and_reported_by_check_store(tmp_path: Path, client: RemotingClient) -> None:
    """A body flipped in a middle record: the pull skips it and serves the rest; mqadmin checkStore shows it."""
    bodies = [b"BODY-%04d-" % i + b"x" * 64 for i in range(10)]
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        for b in bodies:
            resp = await send(client, broker.addr, "Dmg", b, queue_nums=1)
            assert resp.code == ResponseCode.SUCCESS, resp.remark
    seg = tmp_path / "broker" / "commitlog" / f"{0:020d}"
    with open(seg, "r+b") as f:
        data = f.read(1 << 20)
        at = data.index(b"BODY-0004-") + 12
        f.seek(at)
        f.write(b"\x00\xff")
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        resp = await pull(client, broker.addr, "g", "Dmg", 0, 0)
        assert [m.body for m in messages(resp)] == bodies[:4] + bodies[5:]
        rc, out, err = await mqadmin("checkStore", "-n", ns.addr, "-b", broker.addr)
        assert rc == 0, err
        assert "skippedReads" in out and "quarantined" in out
        line = next(x for x in out.splitlines() if x.startswith("skippedReads"))
        assert line.split(":")[-1].strip() == "1"
        rc, out, err = await mqadmin("brokerStatus", "-n", ns.addr, "-b", broker.addr)
        assert rc == 0, err
        assert any(x.startswith("storeSkippedReads") and x.endswith(": 1") for x in out.splitlines()), out
