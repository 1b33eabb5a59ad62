"""Requests brokers send: REGISTER_BROKER, UNREGISTER_BROKER and QUERY_DATA_VERSION.

REGISTER_BROKER (J ``registerBrokerWithFilterServer``): verify ``bodyCrc32`` when non-zero, decode the plain or
compressed body, update the route table, hook the connection's close, and answer with ext ``haServerAddr`` and
``masterAddr`` (present only for a slave whose master is live — J leaves null fields out) and the
ORDER_TOPIC_CONFIG namespace as a KVTable body (no body when that namespace does not exist).
"""

from __future__ import annotations

import zlib

from namesrv.handlers._fields import optional_bool, optional_int, require, to_int
from namesrv.housekeeping import BrokerHousekeeping
from namesrv.kv_config import NAMESPACE_ORDER_TOPIC_CONFIG, KvConfig
from namesrv.route_table import RouteTable
from namesrv.wire import BodyError, decode_data_version, decode_register_body, encode_data_version, encode_kv_table
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import Handler, HandlerError, RequestContext

_BROKER_FIELDS = ("brokerName", "brokerAddr", "clusterName")


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
        name, addr, cluster, ha_addr, raw_id = require(cmd, *_BROKER_FIELDS, "haServerAddr", "brokerId")
        broker_id = to_int("brokerId", raw_id)
        crc = optional_int(cmd, "bodyCrc32", 0)
        if crc != 0:
            actual = zlib.crc32(cmd.body) & 0x7FFFFFFF
            if actual != crc:
                ctx.log.warning("register broker crc32 mismatch", broker=addr, expected=crc, actual=actual)
                raise HandlerError(ResponseCode.SYSTEM_ERROR, f"crc32 not match: bodyCrc32={crc}, body crc32={actual}")
        try:
            reg = decode_register_body(cmd.body, optional_bool(cmd, "compressed"))
        except BodyError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"Failed to decode RegisterBrokerBody: {exc}") from None

        result = self._routes.register(
            cluster,
            addr,
            name,
            broker_id,
            ha_addr,
            reg.data_version,
            reg.topic_configs,
            reg.filter_servers,
            channel_id=ctx.conn.conn_id,
        )
        self._housekeeping.watch(ctx.conn)
        if result.first_registration:
            ctx.log.info("broker registered", broker=addr, name=name, cluster=cluster, broker_id=broker_id)

        ext: dict[str, str] = {}
        if result.ha_server_addr is not None:
            ext["haServerAddr"] = result.ha_server_addr
        if result.master_addr is not None:
            ext["masterAddr"] = result.master_addr
        order = self._kv.namespace(NAMESPACE_ORDER_TOPIC_CONFIG)
        return cmd.make_response(ext_fields=ext, body=encode_kv_table(order) if order is not None else b"")

    async def unregister_broker(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        name, addr, cluster, raw_id = require(cmd, *_BROKER_FIELDS, "brokerId")
        if self._routes.unregister(cluster, addr, name, to_int("brokerId", raw_id)):
            ctx.log.info("broker unregistered", broker=addr, name=name, cluster=cluster)
        return cmd.make_response()

    async def query_data_version(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        _name, addr, _cluster, raw_id = require(cmd, *_BROKER_FIELDS, "brokerId")
        to_int("brokerId", raw_id)
        try:
            dv = decode_data_version(cmd.body)
        except BodyError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"Failed to decode DataVersion: {exc}") from None
        changed = self._routes.is_changed(addr, dv)
        if not changed:
            self._routes.touch(addr)
        ours = self._routes.data_version(addr)
        return cmd.make_response(
            ext_fields={"changed": "true" if changed else "false"},
            body=encode_data_version(ours) if ours is not None else b"",
        )
