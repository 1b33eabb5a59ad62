"""KV config requests: PUT_KV_CONFIG, GET_KV_CONFIG, DELETE_KV_CONFIG and GET_KVLIST_BY_NAMESPACE.

Absent items answer QUERY_NOT_FOUND with J's remarks ("No config item, Namespace: N Key: K" and
"No config item, Namespace: N"). A failure to persist answers SYSTEM_ERROR naming the file.
"""

from __future__ import annotations

from collections.abc import Awaitable

from namesrv.handlers._header import read_header
from namesrv.kv_config import KvConfig
from protocol.bodies import KVTable
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import GetKVListByNamespaceRequestHeader, NamespaceKeyRequestHeader, PutKVConfigRequestHeader
from protocol.remoting import Handler, HandlerError, RequestContext


class KvHandlers:
    def __init__(self, kv: KvConfig) -> None:
        self._kv = kv

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.PUT_KV_CONFIG: self.put,
            RequestCode.GET_KV_CONFIG: self.get,
            RequestCode.DELETE_KV_CONFIG: self.delete,
            RequestCode.GET_KVLIST_BY_NAMESPACE: self.list_namespace,
        }

    async def put(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = read_header(PutKVConfigRequestHeader, cmd)
        namespace, key, value = h.namespace, h.key, h.value
        await self._persist(self._kv.put(namespace, key, value))
        ctx.log.info("kv config put", namespace=namespace, key=key, peer=ctx.conn.peer)
        return cmd.make_response()

    async def get(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = read_header(NamespaceKeyRequestHeader, cmd)
        namespace, key = h.namespace, h.key
        value = self._kv.get(namespace, key)
        if value is None:
            raise HandlerError(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {namespace} Key: {key}")
        return cmd.make_response(ext_fields={"value": value})

    async def delete(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = read_header(NamespaceKeyRequestHeader, cmd)
        namespace, key = h.namespace, h.key
        await self._persist(self._kv.delete(namespace, key))
        ctx.log.info("kv config deleted", namespace=namespace, key=key, peer=ctx.conn.peer)
        return cmd.make_response()

    async def _persist(self, change: Awaitable[None]) -> None:
        """Await a change of the kv file; a failure to write it answers SYSTEM_ERROR naming the file."""
        try:
            await change
        except OSError as exc:
            raise HandlerError(
                ResponseCode.SYSTEM_ERROR, f"persist kv config to {self._kv.path} failed: {exc}"
            ) from None

    async def list_namespace(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        namespace = read_header(GetKVListByNamespaceRequestHeader, cmd).namespace
        table = self._kv.namespace(namespace)
        if table is None:
            raise HandlerError(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {namespace}")
        return cmd.make_response(body=KVTable(table=table).encode())
