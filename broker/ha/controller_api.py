"""The broker's calls to a controller (J's ``BrokerOuterAPI`` controller methods), typed: one method per request
code, each returning the decoded reply or raising ``ControllerError`` (a refusal, with the controller's code and
remark) or ``RemotingError`` (no answer). Wire classes: ``protocol.headers.controller``, ``protocol.bodies.controller``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from protocol.bodies import BodyDecodeError
from protocol.bodies.controller import ElectMasterResponseBody, SyncStateSet
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers.codec import WireHeader
from protocol.headers.controller import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)
from protocol.remoting.client import RemotingClient

TIMEOUT_S = 3.0


class ControllerError(Exception):
    def __init__(self, code: int, remark: str | None) -> None:
        super().__init__(f"controller refused: code {code}: {remark or ''}")
        self.code = code
        self.remark = remark or ""


@dataclass(frozen=True, slots=True)
class MasterView:
    """What a controller says about a broker group: its master (id, address, epoch) and SyncStateSet."""

    master_broker_id: int | None
    master_address: str
    master_epoch: int
    sync_state_set: frozenset[int]
    sync_state_set_epoch: int


def _sss(body: bytes | None) -> SyncStateSet:
    try:
        return SyncStateSet.decode(body or b"")
    except BodyDecodeError:
        return SyncStateSet()


def _master_view(
    h: RegisterBrokerToControllerResponseHeader | GetReplicaInfoResponseHeader,
    body: bytes | None,
    sss_epoch: int | None,
) -> MasterView:
    """A controller's answer about the group: the master from the header, the SyncStateSet from the body (its epoch
    from the header when it names one: ``sss_epoch``)."""
    s = _sss(body)
    return MasterView(
        h.master_broker_id,
        h.master_address or "",
        h.master_epoch or 0,
        frozenset(s.sync_state_set),
        sss_epoch or s.sync_state_set_epoch,
    )


class ControllerApi:
    def __init__(self, client: RemotingClient, cluster: str, broker_name: str) -> None:
        self._client = client
        self.cluster = cluster
        self.broker_name = broker_name

    async def _call(
        self, addr: str, code: RequestCode, header: WireHeader | None, body: bytes = b"", timeout: float = TIMEOUT_S
    ) -> RemotingCommand:
        cmd = RemotingCommand.request(code, header.to_ext_fields() if header is not None else {}, body)
        resp = await self._client.invoke(addr, cmd, timeout)
        if resp.code != ResponseCode.SUCCESS and not (
            code == RequestCode.CONTROLLER_ELECT_MASTER and resp.code == ResponseCode.CONTROLLER_MASTER_STILL_EXIST
        ):
            raise ControllerError(resp.code, resp.remark)
        return resp

    def connection(self, addr: str) -> object | None:
        """The open connection to ``addr`` (its identity tells a reconnect apart), None when there is none."""
        return self._client.open_connection(addr)

    async def leader(self, addr: str) -> str | None:
        resp = await self._call(addr, RequestCode.CONTROLLER_GET_METADATA_INFO, None)
        h = GetMetaDataResponseHeader.from_ext_fields(resp.ext_fields)
        return h.controller_leader_address or None

    async def next_broker_id(self, addr: str) -> int:
        resp = await self._call(
            addr,
            RequestCode.CONTROLLER_GET_NEXT_BROKER_ID,
            GetNextBrokerIdRequestHeader(self.cluster, self.broker_name),
        )
        h = GetNextBrokerIdResponseHeader.from_ext_fields(resp.ext_fields)
        if h.next_broker_id is None:
            raise ControllerError(ResponseCode.SYSTEM_ERROR, "no nextBrokerId in the reply")
        return h.next_broker_id

    async def apply_broker_id(self, addr: str, broker_id: int, check_code: str) -> None:
        header = ApplyBrokerIdRequestHeader(self.cluster, self.broker_name, broker_id, check_code)
        await self._call(addr, RequestCode.CONTROLLER_APPLY_BROKER_ID, header)

    async def register(self, addr: str, broker_id: int, broker_addr: str) -> MasterView:
        header = RegisterBrokerToControllerRequestHeader(
            self.cluster, self.broker_name, broker_id, broker_addr, int(time.time() * 1000)
        )
        resp = await self._call(addr, RequestCode.CONTROLLER_REGISTER_BROKER, header)
        h = RegisterBrokerToControllerResponseHeader.from_ext_fields(resp.ext_fields)
        return _master_view(h, resp.body, h.sync_state_set_epoch)

    async def heartbeat(self, addr: str, header: BrokerHeartbeatRequestHeader, timeout: float) -> None:
        """J sends it one-way; we wait for the controller's "Heart beat success" so the lease can be measured."""
        await self._call(addr, RequestCode.BROKER_HEARTBEAT, header, timeout=timeout)

    async def replica_info(self, addr: str) -> MasterView:
        resp = await self._call(
            addr, RequestCode.CONTROLLER_GET_REPLICA_INFO, GetReplicaInfoRequestHeader(self.broker_name)
        )
        return _master_view(GetReplicaInfoResponseHeader.from_ext_fields(resp.ext_fields), resp.body, None)

    async def elect(self, addr: str, broker_id: int) -> MasterView:
        """The broker's own election request (J ``brokerElect``); MASTER_STILL_EXIST is an answer too."""
        header = ElectMasterRequestHeader(self.cluster, self.broker_name, broker_id, False, int(time.time() * 1000))
        resp = await self._call(addr, RequestCode.CONTROLLER_ELECT_MASTER, header)
        h = ElectMasterResponseHeader.from_ext_fields(resp.ext_fields)
        try:
            body = ElectMasterResponseBody.decode(resp.body or b"")
            ids = frozenset(body.sync_state_set)
        except BodyDecodeError:
            ids = frozenset()
        return MasterView(
            h.master_broker_id, h.master_address or "", h.master_epoch or 0, ids, h.sync_state_set_epoch or 0
        )

    async def alter_sync_state_set(
        self, addr: str, master_id: int, master_epoch: int, new_set: set[int], sss_epoch: int
    ) -> SyncStateSet:
        header = AlterSyncStateSetRequestHeader(self.broker_name, master_id, master_epoch, int(time.time() * 1000))
        body = SyncStateSet(sync_state_set=sorted(new_set), sync_state_set_epoch=sss_epoch).encode()
        resp = await self._call(addr, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, header, body)
        return _sss(resp.body)
