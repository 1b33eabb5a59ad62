"""Requests brokers send: REGISTER_BROKER, UNREGISTER_BROKER and QUERY_DATA_VERSION.

REGISTER_BROKER (J ``registerBrokerWithFilterServer``): verify ``bodyCrc32`` when non-zero, decode the plain or
compressed body, update the route table, hook the connection's close, and answer with ext ``haServerAddr`` and
``masterAddr`` (present only for a slave whose master is live — J leaves null fields out) and the
ORDER_TOPIC_CONFIG namespace as a KVTable body (no body when that namespace does not exist).

Headers are ``protocol.headers``' typed classes, bodies ``protocol.bodies``' models:

| request            | header                          | body (in)           | reply                                     |
|--------------------|---------------------------------|---------------------|-------------------------------------------|
| REGISTER_BROKER    | RegisterBrokerRequestHeader     | RegisterBrokerBody  | RegisterBrokerResponseHeader + KVTable    |
| UNREGISTER_BROKER  | UnregisterBrokerRequestHeader   | —                   | —                                         |
| QUERY_DATA_VERSION | QueryDataVersionRequestHeader   | DataVersion         | QueryDataVersionResponseHeader + ours     |

A registration whose body is empty or carries no ``dataVersion`` has an unknown version, which always counts as
changed.
"""

from __future__ import annotations

from namesrv.handlers._header import read_header
from namesrv.housekeeping import BrokerHousekeeping
from namesrv.kv_config import NAMESPACE_ORDER_TOPIC_CONFIG, KvConfig
from namesrv.route_table import RouteTable
from protocol.bodies import BodyDecodeError, DataVersion, KVTable, RegisterBrokerBody
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.crc import crc32
from protocol.headers import (
    QueryDataVersionRequestHeader,
    QueryDataVersionResponseHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    UnregisterBrokerRequestHeader,
)
from protocol.remoting import Handler, HandlerError, RequestContext


class BrokerHandlers:
    def __init__(self, routes: RouteTable, kv: KvConfig, housekeeping: BrokerHousekeeping) -> None:
        self._routes = routes
        self._kv = kv
        self._housekeeping = housekeeping

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.REGISTER_BROKER: self.register_broker,
            RequestCode.UNREGISTER_BROKER: self.unregister_broker,
            RequestCode.QUERY_DATA_VERSION: self.query_data_version,
        }

    async def register_broker(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = read_header(RegisterBrokerRequestHeader, cmd)
        addr = h.broker_addr
        if h.body_crc32 != 0:
            actual = crc32(cmd.body) & 0x7FFFFFFF
            if actual != h.body_crc32:
                ctx.log.warning("register broker crc32 mismatch", broker=addr, expected=h.body_crc32, actual=actual)
                raise HandlerError(
                    ResponseCode.SYSTEM_ERROR, f"crc32 not match: bodyCrc32={h.body_crc32}, body crc32={actual}"
                )
        try:
            body = RegisterBrokerBody.decode(cmd.body, h.compressed)
        except BodyDecodeError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"Failed to decode RegisterBrokerBody: {exc}") from None
        wrapper = body.topic_config_serialize_wrapper
        known = bool(cmd.body) and "data_version" in wrapper.model_fields_set
        result = self._routes.register(
            h.cluster_name,
            addr,
            h.broker_name,
            h.broker_id,
            h.ha_server_addr,
            wrapper.data_version if known else None,
            wrapper.topic_config_table,
            body.filter_server_list,
            channel_id=ctx.conn.conn_id,
        )
        self._housekeeping.watch(ctx.conn)
        if result.first_registration:
            ctx.log.info(
                "broker registered", broker=addr, name=h.broker_name, cluster=h.cluster_name, broker_id=h.broker_id
            )
        reply = RegisterBrokerResponseHeader(ha_server_addr=result.ha_server_addr, master_addr=result.master_addr)
        order = self._kv.namespace(NAMESPACE_ORDER_TOPIC_CONFIG)
        return cmd.make_response(
            ext_fields=reply.to_ext_fields(), body=KVTable(table=order).encode() if order is not None else b""
        )

    async def unregister_broker(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = read_header(UnregisterBrokerRequestHeader, cmd)
        if self._routes.unregister(h.cluster_name, h.broker_addr, h.broker_name, h.broker_id):
            ctx.log.info("broker unregistered", broker=h.broker_addr, name=h.broker_name, cluster=h.cluster_name)
        return cmd.make_response()

    async def query_data_version(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        addr = read_header(QueryDataVersionRequestHeader, cmd).broker_addr
        try:
            dv = DataVersion.decode(cmd.body)
        except BodyDecodeError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"Failed to decode DataVersion: {exc}") from None
        changed = self._routes.is_changed(addr, dv)
        if not changed:
            self._routes.touch(addr)
        ours = self._routes.data_version(addr)
        return cmd.make_response(
            ext_fields=QueryDataVersionResponseHeader(changed).to_ext_fields(),
            body=ours.encode() if ours is not None else b"",
        )
