"""Broker send and pull over real sockets with an in-process name server: auto-created topics reach the name
server, SEND_MESSAGE (C++ long names) and SEND_MESSAGE_V2 (one-letter names), tag filtering on pull, batch send,
SYNC_FLUSH, and the reply header fields as strings.

No fixed ports, no sleeps as synchronisation: waits poll with a bounded deadline.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import (
    PULL_SUBSCRIPTION,
    batch_body,
    messages,
    pull,
    send,
    send_cmd,
    simple_cmd,
)


async def route(client: RemotingClient, ns_addr: str, topic: str) -> dict[str, Any] | None:
    resp = await client.invoke(ns_addr, simple_cmd(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic=topic), 3.0)
    if resp.code != ResponseCode.SUCCESS:
        return None
    return json.loads(resp.body)  # type: ignore[no-any-return]


async def test_auto_created_topic_reaches_namesrv(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        tbw = await eventually(lambda: route(client, ns.addr, "TBW102"), timeout=5, what="a route for TBW102")
        assert tbw["brokerDatas"][0]["brokerAddrs"]["0"] == broker.addr
        assert tbw["queueDatas"][0]["perm"] == 7
        resp = await send(client, broker.addr, "AutoTopic", b"hello", tags="TagA", queue_nums=4)
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        ext = resp.ext_fields
        assert ext["queueId"] == "0" and ext["queueOffset"] == "0"
        assert len(ext["msgId"]) == 32 and ext["MSG_REGION"] == "DefaultRegion" and ext["TRACE_ON"] == "true"
        r = await eventually(lambda: route(client, ns.addr, "AutoTopic"), timeout=5, what="a route for AutoTopic")
        qd = r["queueDatas"][0]
        assert (qd["readQueueNums"], qd["writeQueueNums"], qd["perm"]) == (4, 4, 6)


async def test_send_v1_v2_and_pull_with_tags(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        tags = ["TagA", "TagB", "TagC", "TagA", None, "TagB"]
        for i, tag in enumerate(tags):
            resp = await send(
                client,
                broker.addr,
                "T1",
                f"m{i}".encode(),
                tags=tag,
                keys=f"k{i}",
                props={"UNIQ_KEY": f"UNIQ{i:028d}", "user": str(i)},
                v2=bool(i % 2),
            )
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            assert resp.ext_fields["queueOffset"] == str(i)

        everything = await pull(client, broker.addr, "G1", "T1", 0, 0)
        assert everything.code == ResponseCode.SUCCESS
        assert everything.ext_fields == {
            "suggestWhichBrokerId": "0",
            "nextBeginOffset": "6",
            "minOffset": "0",
            "maxOffset": "6",
        }
        msgs = messages(everything)
        assert [m.body for m in msgs] == [f"m{i}".encode() for i in range(6)]
        assert msgs[2].properties["UNIQ_KEY"] == "UNIQ" + "2".zfill(28)
        assert msgs[3].properties["KEYS"] == "k3" and msgs[3].properties["user"] == "3"

        only = await pull(client, broker.addr, "G1", "T1", 0, 0, sub="TagA || TagB")
        assert only.code == ResponseCode.SUCCESS
        assert [m.body for m in messages(only)] == [b"m0", b"m1", b"m3", b"m5"]
        assert only.ext_fields["nextBeginOffset"] == "6"

        none = await pull(client, broker.addr, "G1", "T1", 0, 0, sub="TagZ")
        assert none.code in (ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_NOT_FOUND)
        assert none.ext_fields["nextBeginOffset"] == "6"

        at_end = await pull(client, broker.addr, "G1", "T1", 0, 6, sys_flag=PULL_SUBSCRIPTION)
        assert at_end.code == ResponseCode.PULL_NOT_FOUND and at_end.ext_fields["nextBeginOffset"] == "6"
        beyond = await pull(client, broker.addr, "G1", "T1", 0, 60, sys_flag=PULL_SUBSCRIPTION)
        assert beyond.code == ResponseCode.PULL_OFFSET_MOVED


async def test_batch_send(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        body = batch_body(
            [(f"b{i}".encode(), {"TAGS": "TagB", "KEYS": f"bk{i}", "UNIQ_KEY": f"U{i}"}) for i in range(5)]
        )
        ext = {
            "a": "PID_b",
            "b": "BatchT",
            "c": "TBW102",
            "d": "4",
            "e": "1",
            "f": "0",
            "g": "1",
            "h": "0",
            "i": "",
            "j": "0",
            "k": "false",
            "m": "true",
        }
        resp = await client.invoke(broker.addr, RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, ext, body))
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        assert len(resp.ext_fields["msgId"].split(",")) == 5
        assert resp.ext_fields["queueId"] == "1" and resp.ext_fields["queueOffset"] == "0"
        got = messages(await pull(client, broker.addr, "G", "BatchT", 1, 0))
        assert [m.body for m in got] == [f"b{i}".encode() for i in range(5)]
        assert [m.properties["UNIQ_KEY"] for m in got] == [f"U{i}" for i in range(5)]


async def test_send_message_with_batch_true_is_a_batch_as_the_cpp_client_sends_it(
    tmp_path: Path, client: RemotingClient
) -> None:
    """librocketmq 1.2 sends batches as SEND_MESSAGE (10) with header ``batch=true``; J decides by that flag."""
    async with run_broker(None, tmp_path) as broker:
        body = batch_body([(f"c{i}".encode(), {"TAGS": "TagC", "KEYS": f"ck{i}"}) for i in range(3)])
        cmd = send_cmd("CppBatch", body, queue_id=2)
        cmd.ext_fields["batch"] = "true"
        cmd.ext_fields["properties"] = ""
        resp = await client.invoke(broker.addr, cmd)
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        assert len(resp.ext_fields["msgId"].split(",")) == 3
        got = messages(await pull(client, broker.addr, "G", "CppBatch", 2, 0))
        assert [(m.body, m.tags, m.keys) for m in got] == [(f"c{i}".encode(), "TagC", [f"ck{i}"]) for i in range(3)]
        # and without the flag the same bytes are one opaque message, as J stores them
        plain = send_cmd("CppBatch", body, queue_id=3)
        assert (await client.invoke(broker.addr, plain)).code == ResponseCode.SUCCESS
        one = messages(await pull(client, broker.addr, "G", "CppBatch", 3, 0))
        assert [m.body for m in one] == [body]


async def test_sync_flush_send(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, flushDiskType="SYNC_FLUSH") as broker:
        for i in range(3):
            resp = await send(client, broker.addr, "SyncT", f"s{i}".encode())
            assert resp.code == ResponseCode.SUCCESS, resp.remark
        got = messages(await pull(client, broker.addr, "G", "SyncT", 0, 0))
        assert [m.body for m in got] == [b"s0", b"s1", b"s2"]


async def test_a_topic_change_after_sends_applies_to_the_next_send(tmp_path: Path, client: RemotingClient) -> None:
    """The send path remembers which topics passed its checks; every kind of table change must still apply to the
    very next send: a permission change, fewer queues, a delete (then auto-create again), and a slave-style
    replacement of the whole table, which calls no listener."""
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        topics = broker.topics
        for _ in range(2):
            assert (await send(client, broker.addr, "CacheT", b"x", queue_id=3, queue_nums=4)).code == 0
        topics.with_perm("CacheT", 4)  # read only
        resp = await send(client, broker.addr, "CacheT", b"x", queue_id=0)
        assert resp.code == ResponseCode.NO_PERMISSION and "sending message is forbidden" in (resp.remark or "")
        topics.with_perm("CacheT", 6)
        assert (await send(client, broker.addr, "CacheT", b"x", queue_id=3)).code == ResponseCode.SUCCESS
        tc = topics.get("CacheT")
        assert tc is not None
        topics.put(tc.model_copy(update={"write_queue_nums": 2, "read_queue_nums": 2}))
        resp = await send(client, broker.addr, "CacheT", b"x", queue_id=3)
        assert resp.code == ResponseCode.SYSTEM_ERROR and "queueId[3] is illegal" in (resp.remark or "")
        assert topics.delete("CacheT")
        assert (await send(client, broker.addr, "CacheT", b"x", queue_id=3, queue_nums=4)).code == 0
        assert topics.get("CacheT") is not None  # auto-created again
        doc = topics.to_json()
        doc["topicConfigTable"]["CacheT"]["perm"] = 4
        doc["dataVersion"]["counter"] += 1
        assert topics.replace_from_master(doc)
        resp = await send(client, broker.addr, "CacheT", b"x", queue_id=0)
        assert resp.code == ResponseCode.NO_PERMISSION


async def test_negative_queue_id_picks_a_queue(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        resp = await send(client, broker.addr, "AnyQ", b"x", queue_id=-1, queue_nums=4)
        assert resp.code == ResponseCode.SUCCESS
        assert 0 <= int(resp.ext_fields["queueId"]) < 4


async def test_compressed_flag_and_uniq_key_kept(tmp_path: Path, client: RemotingClient) -> None:
    import zlib

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        raw = zlib.compress(b"x" * 5000)
        resp = await send(
            client, broker.addr, "Zip", raw, sys_flag=1, props={"UNIQ_KEY": "0100007F000004C0000011BF56750100"}
        )
        assert resp.code == ResponseCode.SUCCESS
        (msg,) = messages(await pull(client, broker.addr, "G", "Zip", 0, 0))
        assert msg.sys_flag & 1 and msg.body == raw  # stored compressed, never inflated by the broker
        assert msg.properties["UNIQ_KEY"] == "0100007F000004C0000011BF56750100"


async def test_sends_queued_past_wait_time_in_send_queue_get_system_busy_and_nothing_is_lost(tmp_path: Path) -> None:
    """J's BrokerFastFailure: a send that waited behind others longer than ``waitTimeMillsInSendQueue`` is refused
    with SYSTEM_BUSY before it reaches the store; every send answered SUCCESS is stored, no other is."""
    n = 400
    async with run_broker(None, tmp_path, waitTimeMillsInSendQueue=1) as broker:
        host, port = broker.addr.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        cmds = [send_cmd("Busy", f"m{i}".encode(), v2=True, queue_nums=1) for i in range(n)]
        for i, c in enumerate(cmds, 1):
            c.opaque = i
        writer.write(b"".join(encode_frame(c) for c in cmds))  # one write: they all queue behind each other
        await writer.drain()
        decoder = FrameDecoder()
        replies: dict[int, RemotingCommand] = {}
        async with asyncio.timeout(30):
            while len(replies) < n:
                chunk = await reader.read(65536)
                assert chunk, "the broker closed the connection"
                decoder.feed(chunk)
                while (r := decoder.next_frame()) is not None:
                    replies[r.opaque] = r
        writer.close()
        codes = [replies[i].code for i in range(1, n + 1)]
        busy = [replies[i] for i in range(1, n + 1) if replies[i].code == ResponseCode.SYSTEM_BUSY]
        assert busy, "no send was refused although the wait limit is 1 ms"
        assert set(codes) <= {ResponseCode.SUCCESS, ResponseCode.SYSTEM_BUSY}
        assert busy[0].remark.startswith("[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period")
        ok = [f"m{i - 1}".encode() for i in range(1, n + 1) if replies[i].code == ResponseCode.SUCCESS]
        client = RemotingClient()
        try:
            stored = []
            offset = 0
            while True:
                r = await pull(client, broker.addr, "G", "Busy", 0, offset, suspend_ms=0, max_msgs=32)
                if r.code != ResponseCode.SUCCESS:
                    break
                got = messages(r)
                stored += [m.body for m in got]
                offset = got[-1].queue_offset + 1
        finally:
            await client.close()
        assert stored == ok
