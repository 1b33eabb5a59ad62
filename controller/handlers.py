"""The controller's request codes (J 5.5.0 ``ControllerRequestProcessor``): decode the header, hand the job to
``ControllerService``, encode its decision. No rules live here.

| code | command                          | answered by                                               |
|------|----------------------------------|-----------------------------------------------------------|
| 904  | BROKER_HEARTBEAT                 | heartbeat table (every controller, leader or not)         |
| 1001 | CONTROLLER_ALTER_SYNC_STATE_SET  | leader: state.alter_sync_state_set, committed             |
| 1002 | CONTROLLER_ELECT_MASTER          | leader: state.elect_master, committed, then notify        |
| 1003 | CONTROLLER_REGISTER_BROKER       | leader: state.register_broker (address update committed)  |
| 1004 | CONTROLLER_GET_REPLICA_INFO      | leader: state.replica_info                                |
| 1005 | CONTROLLER_GET_METADATA_INFO     | any controller: group, leader id/address, peers           |
| 1006 | CONTROLLER_GET_SYNC_STATE_DATA   | leader: state.sync_state_data (body: broker names)        |
| 1009 | UPDATE_CONTROLLER_CONFIG         | this controller's runtime keys (``config.RUNTIME_KEYS``)  |
| 1010 | GET_CONTROLLER_CONFIG            | this controller's config as ``key=value`` lines           |
| 1011 | CLEAN_BROKER_DATA                | leader: state.clean_broker_data, committed                |
| 1012 | CONTROLLER_GET_NEXT_BROKER_ID    | leader: state.next_broker_id                              |
| 1013 | CONTROLLER_APPLY_BROKER_ID       | leader: state.apply_broker_id, committed                  |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from controller.config import LiveControllerConfig
from controller.heartbeat import DEFAULT_BROKER_CHANNEL_EXPIRED_TIME, Heartbeat
from controller.service import ControllerService
from controller.state import Decision
from protocol.bodies.controller import SyncStateSet, decode_broker_names
from protocol.bodies.lenient import BodyDecodeError
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import MalformedHeaderError
from protocol.headers.controller import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    GetMetaDataResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
)
from protocol.remoting import Handler, HandlerError, RequestContext
from runtime.live_config import ConfigHandlers

Metadata = Callable[[], GetMetaDataResponseHeader]
H = TypeVar("H")


def _header(cls: Callable[[dict[str, str]], H], cmd: RemotingCommand) -> H:
    try:
        return cls(cmd.ext_fields)
    except MalformedHeaderError as exc:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None


def _reply(cmd: RemotingCommand, d: Decision) -> RemotingCommand:
    return cmd.make_response(d.code, d.remark, dict(d.header), d.body or b"")


class ControllerHandlers:
    def __init__(self, service: ControllerService, config: LiveControllerConfig, metadata: Metadata) -> None:
        self._service = service
        self._settings = ConfigHandlers(
            config,
            get_code=RequestCode.GET_CONTROLLER_CONFIG,
            update_code=RequestCode.UPDATE_CONTROLLER_CONFIG,
            what="controller config",
        )
        self._metadata = metadata

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.BROKER_HEARTBEAT: self.heartbeat,
            RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET: self.alter_sync_state_set,
            RequestCode.CONTROLLER_ELECT_MASTER: self.elect_master,
            RequestCode.CONTROLLER_REGISTER_BROKER: self.register_broker,
            RequestCode.CONTROLLER_GET_REPLICA_INFO: self.replica_info,
            RequestCode.CONTROLLER_GET_METADATA_INFO: self.metadata,
            RequestCode.CONTROLLER_GET_SYNC_STATE_DATA: self.sync_state_data,
            **self._settings.table(),  # UPDATE_CONTROLLER_CONFIG, GET_CONTROLLER_CONFIG
            RequestCode.CLEAN_BROKER_DATA: self.clean_broker_data,
            RequestCode.CONTROLLER_GET_NEXT_BROKER_ID: self.next_broker_id,
            RequestCode.CONTROLLER_APPLY_BROKER_ID: self.apply_broker_id,
        }

    async def heartbeat(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(BrokerHeartbeatRequestHeader.from_ext_fields, cmd)
        if h.broker_id is None:
            return cmd.make_response(ResponseCode.CONTROLLER_INVALID_REQUEST, "Heart beat with empty brokerId")
        hb = Heartbeat(
            h.cluster_name,
            h.broker_name,
            h.broker_addr,
            h.broker_id,
            DEFAULT_BROKER_CHANNEL_EXPIRED_TIME if h.heartbeat_timeout_mills is None else h.heartbeat_timeout_mills,
            -1 if h.epoch is None else h.epoch,
            -1 if h.max_offset is None else h.max_offset,
            -1 if h.confirm_offset is None else h.confirm_offset,
            2**31 - 1 if h.election_priority is None else h.election_priority,
        )
        self._service.on_heartbeat(hb, ctx.conn)
        return cmd.make_response(ResponseCode.SUCCESS, "Heart beat success")

    async def alter_sync_state_set(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(AlterSyncStateSetRequestHeader.from_ext_fields, cmd)
        try:
            proposed = SyncStateSet.decode(cmd.body)
        except BodyDecodeError as exc:
            raise HandlerError(ResponseCode.CONTROLLER_INVALID_REQUEST, str(exc)) from None
        s = self._service
        return _reply(cmd, await s.decide(lambda st: st.alter_sync_state_set(h, proposed, s.alive), write=True))

    async def elect_master(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(ElectMasterRequestHeader.from_ext_fields, cmd)
        ctx.log.info("elect master requested", peer=ctx.conn.peer, broker_name=h.broker_name, broker_id=h.broker_id)
        return _reply(cmd, await self._service.elect(h))

    async def register_broker(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(RegisterBrokerToControllerRequestHeader.from_ext_fields, cmd)
        s = self._service
        return _reply(cmd, await s.decide(lambda st: st.register_broker(h, s.alive), write=True))

    async def replica_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(GetReplicaInfoRequestHeader.from_ext_fields, cmd)
        return _reply(cmd, await self._service.decide(lambda st: st.replica_info(h.broker_name), write=False))

    async def metadata(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(ext_fields=self._metadata().to_ext_fields())

    async def sync_state_data(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        if not cmd.body:
            return cmd.make_response()
        try:
            names = decode_broker_names(cmd.body)
        except BodyDecodeError as exc:
            raise HandlerError(ResponseCode.CONTROLLER_INVALID_REQUEST, str(exc)) from None
        if not names:
            return cmd.make_response()
        s = self._service
        return _reply(cmd, await s.decide(lambda st: st.sync_state_data(names, s.alive), write=False))

    async def clean_broker_data(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(CleanControllerBrokerDataRequestHeader.from_ext_fields, cmd)
        ctx.log.info("clean broker data requested", peer=ctx.conn.peer, broker_name=h.broker_name)
        s = self._service
        return _reply(cmd, await s.decide(lambda st: st.clean_broker_data(h, s.alive), write=True))

    async def next_broker_id(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(GetNextBrokerIdRequestHeader.from_ext_fields, cmd)
        return _reply(
            cmd, await self._service.decide(lambda st: st.next_broker_id(h.cluster_name, h.broker_name), write=False)
        )

    async def apply_broker_id(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = _header(ApplyBrokerIdRequestHeader.from_ext_fields, cmd)
        return _reply(cmd, await self._service.decide(lambda st: st.apply_broker_id(h), write=True))
