"""ClientAPI: one async method per RPC the SDK makes. The only client module that builds RemotingCommands.

Replies with a failure code raise the ``protocol.errors`` class registered for it (with ``retriable`` and
``refresh_route`` flags), except where a code is an expected answer (QUERY_NOT_FOUND for offsets, the pull codes,
TOPIC_NOT_EXIST for routes). The native client builds msgpack headers by default (serialize type 2; measured faster
than JSON in ``bench/remoting_bench.py``); a connection sends them as JSON until its server offered msgpack
(``protocol.header_codec``), so the client talks to any RocketMQ. Servers answer in the request's type.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any

from client.message import MessageQueue
from client.route import TopicRoute
from protocol.bodies import CheckClientRequestBody, GetConsumerStatusBody, SubscriptionData, loads_lenient
from protocol.codes import RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import error_for
from protocol.headers import (
    ConsumerSendMsgBackRequestHeader,
    EndTransactionRequestHeader,
    GetConsumerListByGroupRequestHeader,
    PullMessageRequestHeader,
    PullMessageResponseHeader,
    QueryConsumerOffsetRequestHeader,
    QueueRequestHeader,
    SearchOffsetRequestHeader,
    SendMessageRequestHeader,
    SendMessageResponseHeader,
    UnregisterClientRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from protocol.remoting.client import RemotingClient
from protocol.remoting.handler import Channel

SEND_OK_CODES = (
    ResponseCode.SUCCESS,
    ResponseCode.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE,
)
PULL_CODES = (
    ResponseCode.SUCCESS,
    ResponseCode.PULL_NOT_FOUND,
    ResponseCode.PULL_RETRY_IMMEDIATELY,
    ResponseCode.PULL_OFFSET_MOVED,
)


class ClientAPI:
    def __init__(self, remoting: RemotingClient, serialize_type: SerializeType = SerializeType.MSGPACK) -> None:
        self.remoting = remoting
        self._st = serialize_type

    def _cmd(
        self,
        code: int,
        ext: dict[str, str] | None = None,
        body: bytes = b"",
        *,
        oneway: bool = False,
        st: SerializeType | None = None,
    ) -> RemotingCommand:
        return RemotingCommand.request(code, ext, body, oneway=oneway, serialize_type=st or self._st)

    async def invoke(self, addr: str, cmd: RemotingCommand, timeout: float, *, now: bool = False) -> RemotingCommand:
        """Send ``cmd`` and await the reply. Not ``RemotingClient.invoke``: that wraps the connection lookup in
        ``asyncio.wait_for``, which on Python 3.11 can swallow a cancellation of the caller (a consumer's close then
        never finishes); the dial is bounded by the client's connect timeout instead."""
        conn = self.remoting.open_connection(addr)
        if conn is None:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            conn = await self.remoting.get_connection(addr)
            timeout = max(deadline - loop.time(), 0.001)
        if self.remoting.rpc_hook is not None:
            self.remoting.rpc_hook(cmd)
        return await conn.invoke(cmd, timeout, now=now)

    async def _ok(
        self, addr: str, cmd: RemotingCommand, timeout: float, ok: tuple[int, ...] = (ResponseCode.SUCCESS,)
    ) -> RemotingCommand:
        resp = await self.invoke(addr, cmd, timeout)
        if resp.code not in ok:
            raise error_for(resp.code, resp.remark, addr)
        return resp

    # -- name server -----------------------------------------------------------------------------------------------

    async def get_route(self, ns_addr: str, topic: str, timeout: float = 3.0) -> TopicRoute | None:
        # JSON on purpose: a name server of any implementation answers it
        cmd = self._cmd(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}, st=SerializeType.JSON)
        resp = await self._ok(ns_addr, cmd, timeout, (ResponseCode.SUCCESS, ResponseCode.TOPIC_NOT_EXIST))
        if resp.code == ResponseCode.TOPIC_NOT_EXIST or not resp.body:
            return None
        return TopicRoute.parse(topic, resp.body)

    async def get_topic_list(self, ns_addr: str, timeout: float = 3.0) -> list[str]:
        cmd = self._cmd(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, st=SerializeType.JSON)
        resp = await self._ok(ns_addr, cmd, timeout)
        return [str(t) for t in loads_lenient(resp.body).get("topicList", [])] if resp.body else []

    # -- send ------------------------------------------------------------------------------------------------------

    async def send(
        self, addr: str, header: SendMessageRequestHeader, body: bytes, timeout: float, *, batch: bool = False
    ) -> tuple[int, SendMessageResponseHeader]:
        resp = await self._request(addr, self._send_cmd(header, body, batch), timeout)
        if resp.code not in SEND_OK_CODES:
            raise error_for(resp.code, resp.remark, addr)
        return resp.code, SendMessageResponseHeader.from_ext_fields(resp.ext_fields)

    def send_request(
        self, header: SendMessageRequestHeader, body: bytes, *, batch: bool = False
    ) -> RemotingCommand | None:
        """The request ``send`` would write, for a caller that writes it itself (``client.direct``); None when an
        RPC hook (ACL signing) must see every request on the loop."""
        return None if self.remoting.rpc_hook is not None else self._send_cmd(header, body, batch)

    def _send_cmd(self, header: SendMessageRequestHeader, body: bytes, batch: bool) -> RemotingCommand:
        code = RequestCode.SEND_BATCH_MESSAGE if batch else RequestCode.SEND_MESSAGE_V2
        return RemotingCommand.request(code, header.to_v2_ext_fields(), body, serialize_type=self._st)

    def _request(
        self, addr: str, cmd: RemotingCommand, timeout: float, *, now: bool = False
    ) -> Awaitable[RemotingCommand]:
        """``cmd``'s reply, to await: on an open connection with no RPC hook (the common case) the connection's own
        ``invoke``, with no coroutine layer between (sends and pulls come here once each), else ``invoke``."""
        conn = self.remoting.open_connection(addr)
        if conn is None or self.remoting.rpc_hook is not None:
            return self.invoke(addr, cmd, timeout, now=now)
        return conn.invoke(cmd, timeout, now=now)

    async def send_oneway(self, addr: str, header: SendMessageRequestHeader, body: bytes) -> None:
        cmd = self._cmd(RequestCode.SEND_MESSAGE_V2, header.to_v2().to_ext_fields(), body, oneway=True)
        await self.remoting.invoke_oneway(addr, cmd)

    async def end_transaction(self, addr: str, header: EndTransactionRequestHeader) -> None:
        """END_TRANSACTION is oneway, as J and C++ send it."""
        cmd = self._cmd(RequestCode.END_TRANSACTION, header.to_ext_fields(), oneway=True, st=SerializeType.JSON)
        await self.remoting.invoke_oneway(addr, cmd)

    def end_transaction_on(self, channel: Channel, header: EndTransactionRequestHeader) -> None:
        """END_TRANSACTION answering a CHECK_TRANSACTION_STATE, on the connection the check came in on."""
        cmd = self._cmd(RequestCode.END_TRANSACTION, header.to_ext_fields(), oneway=True, st=SerializeType.JSON)
        if self.remoting.rpc_hook is not None:
            self.remoting.rpc_hook(cmd)
        channel.invoke_oneway(cmd)

    # -- pull and offsets ------------------------------------------------------------------------------------------

    async def pull(
        self, addr: str, header: PullMessageRequestHeader, timeout: float
    ) -> tuple[int, PullMessageResponseHeader, bytes]:
        cmd = RemotingCommand.request(RequestCode.PULL_MESSAGE, header.to_ext_fields(), serialize_type=self._st)
        # written at once, not with the pulls of the other queues whose replies came in the same read: the broker
        # serves this one while the consumer decodes those (with them coalesced, the two took turns)
        resp = await self._request(addr, cmd, timeout, now=True)
        if resp.code not in PULL_CODES:
            raise error_for(resp.code, resp.remark, addr)
        return resp.code, PullMessageResponseHeader.from_ext_fields(resp.ext_fields), resp.body

    async def query_consumer_offset(self, addr: str, group: str, mq: MessageQueue, timeout: float = 3.0) -> int | None:
        h = QueryConsumerOffsetRequestHeader(group, mq.topic, mq.queue_id)
        resp = await self._ok(
            addr,
            self._cmd(RequestCode.QUERY_CONSUMER_OFFSET, h.to_ext_fields()),
            timeout,
            (ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND),
        )
        if resp.code == ResponseCode.QUERY_NOT_FOUND:
            return None
        return int(resp.ext_fields["offset"])

    async def update_consumer_offset(
        self, addr: str, group: str, mq: MessageQueue, offset: int, *, oneway: bool = False, timeout: float = 3.0
    ) -> None:
        h = UpdateConsumerOffsetRequestHeader(group, mq.topic, mq.queue_id, offset)
        cmd = self._cmd(RequestCode.UPDATE_CONSUMER_OFFSET, h.to_ext_fields(), oneway=oneway)
        if oneway:
            await self.remoting.invoke_oneway(addr, cmd)
        else:
            await self._ok(addr, cmd, timeout)

    async def _offset(self, addr: str, code: int, ext: dict[str, str], timeout: float) -> int:
        resp = await self._ok(addr, self._cmd(code, ext), timeout)
        return int(resp.ext_fields["offset"])

    async def get_max_offset(self, addr: str, mq: MessageQueue, timeout: float = 3.0) -> int:
        return await self._offset(
            addr, RequestCode.GET_MAX_OFFSET, QueueRequestHeader(mq.topic, mq.queue_id).to_ext_fields(), timeout
        )

    async def get_min_offset(self, addr: str, mq: MessageQueue, timeout: float = 3.0) -> int:
        return await self._offset(
            addr, RequestCode.GET_MIN_OFFSET, QueueRequestHeader(mq.topic, mq.queue_id).to_ext_fields(), timeout
        )

    async def search_offset(self, addr: str, mq: MessageQueue, timestamp: int, timeout: float = 3.0) -> int:
        return await self._offset(
            addr,
            RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
            SearchOffsetRequestHeader(mq.topic, mq.queue_id, timestamp).to_ext_fields(),
            timeout,
        )

    # -- clients ---------------------------------------------------------------------------------------------------

    @staticmethod
    def encode_json(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()

    @staticmethod
    def encode_consumer_status(table: dict[MessageQueue, int]) -> bytes:
        """GetConsumerStatusBody as J writes it: ``{"consumerTable":{},"messageQueueTable":{<MessageQueue object>:
        offset}}`` (object keys, not valid JSON; brokers relay the table as text)."""
        return GetConsumerStatusBody(message_queue_table=dict(table)).encode()

    async def heartbeat(self, addr: str, body: dict[str, Any], timeout: float = 3.0) -> None:
        await self._ok(addr, self._cmd(RequestCode.HEART_BEAT, {}, self.encode_json(body)), timeout)

    async def check_client_config(
        self, addr: str, group: str, client_id: str, subscription: SubscriptionData, timeout: float = 3.0
    ) -> None:
        """CHECK_CLIENT_CONFIG (J ``checkClientInBroker``): the broker compiles a non-TAG subscription; raises the
        broker's error (SUBSCRIPTION_PARSE_FAILED with the parser's message, SYSTEM_ERROR when it has no filter)."""
        body = CheckClientRequestBody(client_id=client_id, group=group, subscription_data=subscription).encode()
        await self._ok(addr, self._cmd(RequestCode.CHECK_CLIENT_CONFIG, {}, body), timeout)

    async def unregister_client(
        self, addr: str, client_id: str, producer_group: str | None, consumer_group: str | None, timeout: float = 3.0
    ) -> None:
        h = UnregisterClientRequestHeader(client_id, producer_group, consumer_group)
        await self._ok(addr, self._cmd(RequestCode.UNREGISTER_CLIENT, h.to_ext_fields()), timeout)

    async def get_consumer_ids(self, addr: str, group: str, timeout: float = 3.0) -> list[str]:
        """The group's client ids as the broker knows them; [] when it knows none (J: SYSTEM_ERROR "no consumer")."""
        h = GetConsumerListByGroupRequestHeader(group)
        resp = await self.invoke(addr, self._cmd(RequestCode.GET_CONSUMER_LIST_BY_GROUP, h.to_ext_fields()), timeout)
        if resp.code != ResponseCode.SUCCESS or not resp.body:
            return []
        return [str(c) for c in loads_lenient(resp.body).get("consumerIdList") or []]

    async def send_back(
        self,
        addr: str,
        phys_offset: int,
        group: str,
        delay_level: int,
        origin_msg_id: str,
        origin_topic: str,
        max_reconsume_times: int,
        timeout: float = 3.0,
    ) -> None:
        h = ConsumerSendMsgBackRequestHeader(
            phys_offset, group, delay_level, origin_msg_id, origin_topic, False, max_reconsume_times
        )
        await self._ok(addr, self._cmd(RequestCode.CONSUMER_SEND_MSG_BACK, h.to_ext_fields()), timeout)

    async def lock_batch(
        self, addr: str, group: str, client_id: str, mqs: list[MessageQueue], timeout: float = 3.0
    ) -> set[MessageQueue]:
        body = self.encode_json({"consumerGroup": group, "clientId": client_id, "mqSet": [m.to_json() for m in mqs]})
        resp = await self._ok(addr, self._cmd(RequestCode.LOCK_BATCH_MQ, {}, body), timeout)
        if not resp.body:
            return set()
        return {MessageQueue.from_json(d) for d in loads_lenient(resp.body).get("lockOKMQSet", [])}

    async def unlock_batch(self, addr: str, group: str, client_id: str, mqs: list[MessageQueue]) -> None:
        body = self.encode_json({"consumerGroup": group, "clientId": client_id, "mqSet": [m.to_json() for m in mqs]})
        await self.remoting.invoke_oneway(addr, self._cmd(RequestCode.UNLOCK_BATCH_MQ, {}, body, oneway=True))
