"""``brokerPermission`` changed at runtime (UPDATE_BROKER_CONFIG), as Apache RocketMQ 5.5.0 applies it (the
reference suite's read-only-broker scenario): sends are refused at once, pulls go on, and the name server routes every
topic with the broker's permission."""

from __future__ import annotations

from pathlib import Path

from client.admin.admin_client import AdminClient
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import messages, pull, send


async def test_read_only_at_runtime_refuses_sends_and_reroutes(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker, AdminClient(ns.addr) as admin:
        assert (await send(client, broker.addr, "PermT", b"before")).code == ResponseCode.SUCCESS
        update = RemotingCommand.request(RequestCode.UPDATE_BROKER_CONFIG, {}, b"brokerPermission=4\n")
        r = await client.invoke(broker.addr, update, 5.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        r = await send(client, broker.addr, "PermT", b"after")
        assert r.code == ResponseCode.NO_PERMISSION and "sending message is forbidden" in (r.remark or "")
        qid = next(q for q in range(8) if broker.store.get_max_offset_in_queue("PermT", q) == 1)
        assert [m.body for m in messages(await pull(client, broker.addr, "G", "PermT", qid, 0))] == [b"before"]

        async def read_only_route() -> bool:
            route, _ = await admin.topic_route("PermT")
            return all(q.perm == 4 for q in route.queues)

        await eventually(read_only_route, what="PermT routed read-only")
