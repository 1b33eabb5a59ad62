"""Controller mode, in process (our controller, two brokers): what a master lets consumers read. Only what its
SyncStateSet confirmed — and that promptly: each put reaches the slaves at once, whether or not it waits for them, not
at the next ``haSendHeartbeatInterval``. A master that learns it was deposed never lets a consumer read a record its
SyncStateSet did not confirm. The record stays hidden until the handshake with the new
master cuts it, so a pull held at its queue offset is answered with the new master's record stored there — never
with the cut one (which would move the consumer's next offset past the new master's record: the official C++
push consumer, pulling from the old master until its 30 s route refresh, lost acknowledged messages that way)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from broker.app import BrokerApp
from broker.ha.replicas import ReplicasManager
from controller.app import ControllerApp
from protocol.codes import RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.headers.cold import CreateTopicRequestHeader
from protocol.headers.controller import ElectMasterRequestHeader
from protocol.headers.pull import PULL_FLAG_SUSPEND
from protocol.record_decode import decode_records
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import PULL_SUBSCRIPTION, pull, send
from tests.integration.test_controller_single import controller_config

CLUSTER = "DeposedCluster"
GROUP = "broker-deposed"
TOPIC = "DeposedReadTopic"


def _replicas(app: BrokerApp) -> ReplicasManager:
    assert app.ha is not None and app.ha.replicas is not None
    return app.ha.replicas


@asynccontextmanager
async def _group(tmp_path: Path, **extra: Any) -> AsyncIterator[tuple[ControllerApp, BrokerApp, BrokerApp]]:
    common: dict[str, Any] = {
        "brokerClusterName": CLUSTER,
        "brokerName": GROUP,
        "enableControllerMode": True,
        "brokerHeartbeatInterval": 200,
        "syncBrokerMetadataPeriod": 500,
        "checkSyncStateSetPeriod": 600_000,  # the set never shrinks here: the unconfirmed record stays unconfirmed
        "registerNameServerPeriod": 1000,
        **extra,
    }
    async with (
        ControllerApp(controller_config(tmp_path)) as ctl,
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, controllerAddr=ctl.addr, storePathRootDir=tmp_path / "b1", **common) as b1,
    ):
        await eventually(lambda: _replicas(b1).role == "MASTER", timeout=20, what="b1 master")
        async with run_broker(ns, tmp_path, controllerAddr=ctl.addr, storePathRootDir=tmp_path / "b2", **common) as b2:
            yield ctl, b1, b2


async def _bodies(client: RemotingClient, addr: str, offset: int, **kw: Any) -> list[bytes]:
    r = await pull(client, addr, "CG_deposed", TOPIC, 0, offset, **kw)
    if r.code != ResponseCode.SUCCESS:
        return []
    return [m.body for m in decode_records(r.body)]


async def _create_topic(client: RemotingClient, *apps: BrokerApp) -> None:
    for app in apps:
        create = CreateTopicRequestHeader(TOPIC, "TBW102", 1, 1, 6, "SINGLE_TAG", 0, False, None)
        cmd = RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, create.to_ext_fields())
        assert (await client.invoke(app.addr, cmd, 5.0)).code == ResponseCode.SUCCESS


async def test_a_put_is_readable_once_the_set_has_it_not_at_the_next_ha_heartbeat(tmp_path: Path) -> None:
    """inSyncReplicas=1: no put waits for the slave, yet the master serves only what the slave acked. Were the
    master's writer to push only when a put waits for a slave, or at its idle heartbeat (a minute here), the records
    would stay unreadable for that long (the reference failover test saw its new master read nothing new then)."""
    client = RemotingClient()
    try:
        async with _group(tmp_path, haSendHeartbeatInterval=60_000, haHousekeepingInterval=120_000) as (_, b1, b2):
            r1 = _replicas(b1)
            await eventually(lambda: sorted(r1.tracker.members) == [1, 2], timeout=20, what="SyncStateSet [1, 2]")
            await _create_topic(client, b1, b2)
            for body, wait in ((b"waits", "true"), (b"does-not-wait", "false")):
                r = await send(client, b1.addr, TOPIC, body, queue_nums=1, props={"WAIT": wait})
                assert r.code == ResponseCode.SUCCESS, r.remark
            await eventually(
                lambda: _bodies_are(client, b1.addr, [b"waits", b"does-not-wait"]),
                timeout=10,
                what="both records confirmed by the slave and readable on the master",
            )
    finally:
        await client.close()


async def _bodies_are(client: RemotingClient, addr: str, want: list[bytes]) -> bool:
    return await _bodies(client, addr, 0, suspend_ms=0) == want


async def test_deposed_master_hides_its_unconfirmed_tail_until_cut(tmp_path: Path) -> None:
    client = RemotingClient()
    try:
        async with _group(tmp_path) as (ctl, b1, b2):
            r1, r2 = _replicas(b1), _replicas(b2)
            await eventually(lambda: sorted(r1.tracker.members) == [1, 2], timeout=20, what="SyncStateSet [1, 2]")
            await _create_topic(client, b1, b2)
            r = await send(client, b1.addr, TOPIC, b"confirmed", queue_nums=1)
            assert r.code == ResponseCode.SUCCESS, r.remark
            await eventually(
                lambda: _bodies(client, b1.addr, 0, suspend_ms=0), timeout=10, what="the confirmed record readable"
            )

            # b2 stops replicating: a record b1 stores now is acknowledged (inSyncReplicas=1) but never confirmed
            await r2.slave.stop()
            r = await send(client, b1.addr, TOPIC, b"unconfirmed", queue_nums=1)
            assert r.code == ResponseCode.SUCCESS, r.remark
            assert await _bodies(client, b1.addr, 1, suspend_ms=0) == []
            # a push consumer's pull, held (long polling) at the unconfirmed record's queue offset
            held = asyncio.ensure_future(
                _bodies(
                    client, b1.addr, 1, suspend_ms=20_000, sys_flag=PULL_FLAG_SUSPEND | PULL_SUBSCRIPTION, timeout=30.0
                )
            )

            # the operator designates b2 (J's mqadmin electMaster): b1 hears it is deposed (NOTIFY_BROKER_ROLE_CHANGED)
            elect = ElectMasterRequestHeader(cluster_name=CLUSTER, broker_name=GROUP, broker_id=2, designate_elect=True)
            cmd = RemotingCommand.request(
                RequestCode.CONTROLLER_ELECT_MASTER, elect.to_ext_fields(), serialize_type=SerializeType.JSON
            )
            assert (await client.invoke(ctl.addr, cmd, 5.0)).code == ResponseCode.SUCCESS
            # writable, not just MASTER: a master elected by a role notification takes writes only once its next
            # replica-info check grants the lease (``broker.ha.replicas``); until then a send is refused (retriable)
            await eventually(
                lambda: r1.role == "SLAVE" and r2.role == "MASTER" and r2.writable,
                timeout=20,
                what="b2 a writable master, b1 slave",
            )
            # the handshake with b2 cuts b1's unconfirmed tail
            s1, s2 = b1.store, b2.store
            assert s1 is not None and s2 is not None
            await eventually(lambda: s1.commitlog.max_offset == s2.commitlog.max_offset, timeout=20, what="b1 cut")
            assert not held.done() or await held != [b"unconfirmed"]

            # the new master's record at the same queue offset is what the held pull (or any later one) gets
            r = await send(client, b2.addr, TOPIC, b"after", queue_nums=1)
            assert r.code == ResponseCode.SUCCESS, r.remark
            assert await held in ([b"after"], [])
            assert await eventually(lambda: _bodies(client, b1.addr, 1, suspend_ms=0), timeout=20) == [b"after"]
            assert await _bodies(client, b2.addr, 1, suspend_ms=0) == [b"after"]
    finally:
        await client.close()
