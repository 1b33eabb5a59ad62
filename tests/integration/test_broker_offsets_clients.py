"""Consumer offsets (update oneway and normal, query rules, persistence across a restart, commit piggy-backed on
pulls, min/max/by-time queries) and client membership (heartbeat, consumer list, NOTIFY_CONSUMER_IDS_CHANGED pushed
to the other consumers, unregister, connection close).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import HandlerRegistry, RemotingClient, RequestContext
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import PULL_COMMIT, PULL_SUBSCRIPTION, heartbeat_cmd, pull, send, simple_cmd


async def invoke(client: RemotingClient, addr: str, code: int, **ext: object) -> RemotingCommand:
    return await client.invoke(addr, simple_cmd(code, **ext), 5.0)


async def test_offsets_update_query_persist_restart(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        async with run_broker(ns, tmp_path, flushConsumerOffsetInterval=100) as broker:
            for i in range(3):
                await send(client, broker.addr, "OffT", f"{i}".encode(), queue_id=i % 2)
            # nothing committed yet, nothing ever deleted → J answers SUCCESS offset 0
            q = await invoke(
                client, broker.addr, RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="G", topic="OffT", queueId=0
            )
            assert q.code == ResponseCode.SUCCESS and q.ext_fields["offset"] == "0"
            upd = await invoke(
                client,
                broker.addr,
                RequestCode.UPDATE_CONSUMER_OFFSET,
                consumerGroup="G",
                topic="OffT",
                queueId=0,
                commitOffset=2,
            )
            assert upd.code == ResponseCode.SUCCESS
            oneway = simple_cmd(
                RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="OffT", queueId=1, commitOffset=1
            )
            await client.invoke_oneway(
                broker.addr, RemotingCommand.request(oneway.code, oneway.ext_fields, oneway=True)
            )
            await eventually(lambda: broker.offsets.query("G", "OffT", 1) == 1)
            # commit piggy-backed on a pull (sysFlag COMMIT_OFFSET)
            await pull(
                client, broker.addr, "G2", "OffT", 0, 0, sys_flag=PULL_COMMIT | PULL_SUBSCRIPTION, commit_offset=1
            )
            assert broker.offsets.query("G2", "OffT", 0) == 1
            offsets_file = tmp_path / "broker" / "config" / "consumerOffset.json"
            await eventually(
                lambda: offsets_file.exists() and "OffT@G" in json.loads(offsets_file.read_text())["offsetTable"]
            )
            mx = await invoke(client, broker.addr, RequestCode.GET_MAX_OFFSET, topic="OffT", queueId=0)
            mn = await invoke(client, broker.addr, RequestCode.GET_MIN_OFFSET, topic="OffT", queueId=0)
            assert (mx.ext_fields["offset"], mn.ext_fields["offset"]) == ("2", "0")
            ts = await invoke(client, broker.addr, RequestCode.GET_EARLIEST_MSG_STORETIME, topic="OffT", queueId=0)
            assert ts.code == ResponseCode.SUCCESS and int(ts.ext_fields["timestamp"]) > 0
            by_time = await invoke(
                client, broker.addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, topic="OffT", queueId=0, timestamp=0
            )
            assert by_time.code == ResponseCode.SUCCESS and by_time.ext_fields["offset"] == "0"
            last = await invoke(
                client,
                broker.addr,
                RequestCode.UPDATE_CONSUMER_OFFSET,
                consumerGroup="G",
                topic="OffT",
                queueId=0,
                commitOffset=2,
            )
            assert last.code == ResponseCode.SUCCESS
        async with run_broker(ns, tmp_path) as again:
            for qid, want in ((0, "2"), (1, "1")):
                r = await invoke(
                    client,
                    again.addr,
                    RequestCode.QUERY_CONSUMER_OFFSET,
                    consumerGroup="G",
                    topic="OffT",
                    queueId=qid,
                )
                assert r.code == ResponseCode.SUCCESS and r.ext_fields["offset"] == want
            assert again.offsets.query("G2", "OffT", 0) == 1


async def test_membership_change_notifies_other_consumer(tmp_path: Path) -> None:
    notified: asyncio.Queue[str] = asyncio.Queue()

    async def on_notify(ctx: RequestContext, cmd: RemotingCommand) -> None:
        notified.put_nowait(cmd.ext_fields.get("consumerGroup", ""))

    registry = HandlerRegistry()
    registry.register(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, on_notify)
    first, second = RemotingClient(registry), RemotingClient()
    try:
        async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
            assert (await send(first, broker.addr, "MemT", b"x")).code == ResponseCode.SUCCESS
            hb = await first.invoke(broker.addr, heartbeat_cmd("111-127.0.0.1@A", "CG", "MemT", "TagA || TagB"))
            assert hb.code == ResponseCode.SUCCESS
            assert await asyncio.wait_for(notified.get(), 5) == "CG"  # its own join
            assert "%RETRY%CG" in broker.topics
            lst = await invoke(first, broker.addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="CG")
            assert json.loads(lst.body) == {"consumerIdList": ["111-127.0.0.1@A"]}

            hb2 = await second.invoke(broker.addr, heartbeat_cmd("222-127.0.0.1@B", "CG", "MemT", "TagA || TagB"))
            assert hb2.code == ResponseCode.SUCCESS
            assert await asyncio.wait_for(notified.get(), 5) == "CG"  # the other consumer joined
            lst = await invoke(first, broker.addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="CG")
            assert sorted(json.loads(lst.body)["consumerIdList"]) == ["111-127.0.0.1@A", "222-127.0.0.1@B"]

            # a pull without the SUBSCRIPTION flag uses the heartbeat's subscription
            got = await pull(first, broker.addr, "CG", "MemT", 0, 0, sys_flag=0)
            assert got.code in (ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_NOT_FOUND)  # untagged msg

            unreg = await invoke(
                second,
                broker.addr,
                RequestCode.UNREGISTER_CLIENT,
                clientID="222-127.0.0.1@B",
                producerGroup="",
                consumerGroup="CG",
            )
            assert unreg.code == ResponseCode.SUCCESS
            assert await asyncio.wait_for(notified.get(), 5) == "CG"
            await second.invoke(broker.addr, heartbeat_cmd("222-127.0.0.1@B", "CG", "MemT"))
            assert await asyncio.wait_for(notified.get(), 5) == "CG"
            await second.close()  # connection closed → the rest of the group is told
            assert await asyncio.wait_for(notified.get(), 5) == "CG"
            await eventually(lambda: broker.clients.client_ids("CG") == ["111-127.0.0.1@A"])

            none = await invoke(first, broker.addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="nobody")
            assert none.code == ResponseCode.SYSTEM_ERROR and none.remark == "no consumer for this group, nobody"
            chk = await invoke(first, broker.addr, RequestCode.CHECK_CLIENT_CONFIG)
            assert chk.code == ResponseCode.SUCCESS
    finally:
        await first.close()
        await second.close()


async def test_expired_channel_is_dropped(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, channelExpiredTimeout=300) as broker:
        await client.invoke(broker.addr, heartbeat_cmd("333@C", "EG", "ExpT"))
        assert broker.clients.client_ids("EG") == ["333@C"]
        await eventually(lambda: broker.clients.client_ids("EG") == [])
