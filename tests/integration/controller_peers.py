"""A broker's side of the controller protocol for the controller tests: ``ReplicaPeer`` speaks to a controller
exactly as J 5.5.0's ``ReplicasManager`` / ``BrokerOuterAPI`` do (GET_NEXT_BROKER_ID, APPLY_BROKER_ID,
REGISTER_BROKER, BROKER_HEARTBEAT, ELECT_MASTER, ALTER_SYNC_STATE_SET, GET_REPLICA_INFO) over its own connection,
and listens on a real port for the controller's NOTIFY_BROKER_ROLE_CHANGED pushes, which it records."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from protocol.bodies.controller import SyncStateSet
from protocol.codes import RequestCode, SerializeType
from protocol.command import RemotingCommand
from protocol.headers.controller import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    NotifyBrokerRoleChangedRequestHeader,
    RegisterBrokerToControllerRequestHeader,
)
from protocol.remoting import HandlerRegistry, RemotingClient, RemotingServer, RequestContext

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "DefaultCluster"


class ReplicaPeer:
    def __init__(self, broker_name: str, controller: str) -> None:
        self.broker_name = broker_name
        self.controller = controller
        self.client = RemotingClient()
        self.notified: list[NotifyBrokerRoleChangedRequestHeader] = []
        registry = HandlerRegistry()
        registry.register(RequestCode.NOTIFY_BROKER_ROLE_CHANGED, self._on_notify)
        self.server = RemotingServer(registry, "127.0.0.1", 0, name="fake-broker")
        self.broker_id = -1

    async def _on_notify(self, ctx: RequestContext, cmd: RemotingCommand) -> None:
        self.notified.append(NotifyBrokerRoleChangedRequestHeader.from_ext_fields(cmd.ext_fields))

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    async def __aenter__(self) -> ReplicaPeer:
        await self.server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()
        await self.server.stop(0)

    async def call(self, code: int, ext: dict[str, str], body: bytes = b"") -> RemotingCommand:
        cmd = RemotingCommand.request(code, ext, body, serialize_type=SerializeType.JSON)
        return await self.client.invoke(self.controller, cmd, 5.0)

    async def register(self) -> RemotingCommand:
        """J ReplicasManager.register(): next id, apply it with a check code, register the address."""
        nxt = await self.call(
            RequestCode.CONTROLLER_GET_NEXT_BROKER_ID,
            GetNextBrokerIdRequestHeader(cluster_name=CLUSTER, broker_name=self.broker_name).to_ext_fields(),
        )
        assert nxt.code == 0, nxt.remark
        self.broker_id = int(nxt.ext_fields["nextBrokerId"])
        applied = await self.call(
            RequestCode.CONTROLLER_APPLY_BROKER_ID,
            ApplyBrokerIdRequestHeader(
                cluster_name=CLUSTER,
                broker_name=self.broker_name,
                applied_broker_id=self.broker_id,
                register_check_code=f"{self.addr};1700000000000",
            ).to_ext_fields(),
        )
        assert applied.code == 0, applied.remark
        reg = await self.call(
            RequestCode.CONTROLLER_REGISTER_BROKER,
            RegisterBrokerToControllerRequestHeader(
                cluster_name=CLUSTER, broker_name=self.broker_name, broker_id=self.broker_id, broker_address=self.addr
            ).to_ext_fields(),
        )
        assert reg.code == 0, reg.remark
        return reg

    async def heartbeat(self, timeout_ms: int = 60_000, epoch: int = 0, max_offset: int = 0) -> None:
        hb = BrokerHeartbeatRequestHeader(
            cluster_name=CLUSTER,
            broker_addr=self.addr,
            broker_name=self.broker_name,
            broker_id=self.broker_id,
            epoch=epoch,
            max_offset=max_offset,
            confirm_offset=max_offset,
            heartbeat_timeout_mills=timeout_ms,
            election_priority=0,
        )
        cmd = RemotingCommand.request(
            RequestCode.BROKER_HEARTBEAT, hb.to_ext_fields(), serialize_type=SerializeType.JSON
        )
        await self.client.invoke_oneway(self.controller, cmd)

    async def elect(self) -> RemotingCommand:
        req = ElectMasterRequestHeader(
            cluster_name=CLUSTER, broker_name=self.broker_name, broker_id=self.broker_id, designate_elect=False
        )
        return await self.call(RequestCode.CONTROLLER_ELECT_MASTER, req.to_ext_fields())

    async def alter(self, members: list[int], master_epoch: int, sss_epoch: int) -> RemotingCommand:
        req = AlterSyncStateSetRequestHeader(
            broker_name=self.broker_name, master_broker_id=self.broker_id, master_epoch=master_epoch
        )
        body = SyncStateSet(sync_state_set=members, sync_state_set_epoch=sss_epoch).encode()
        return await self.call(RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, req.to_ext_fields(), body)

    async def replica_info(self, controller: str | None = None) -> RemotingCommand:
        cmd = RemotingCommand.request(
            RequestCode.CONTROLLER_GET_REPLICA_INFO,
            GetReplicaInfoRequestHeader(broker_name=self.broker_name).to_ext_fields(),
            serialize_type=SerializeType.JSON,
        )
        return await self.client.invoke(controller or self.controller, cmd, 5.0)


async def mqadmin(*args: str) -> tuple[int, str, str]:
    """Our ``mqadmin`` as a user runs it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client.admin",
        *args,
        cwd=str(REPO),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()
