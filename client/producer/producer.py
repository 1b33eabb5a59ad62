"""Producer: send (awaits the broker's reply), send_oneway, send_batch, ordered sends, transactions.

Sends use SEND_MESSAGE_V2 (batches SEND_BATCH_MESSAGE). A topic the name server does not know is sent through
the TBW102 route (the broker auto-creates it when allowed), as the official clients do. Sync sends retry
``retry_times_when_send_failed`` (2) times on retriable errors, on another broker when there is one; a FLUSH_* or
SLAVE_NOT_AVAILABLE status is returned, not retried (RocketMQ's ``retryAnotherBrokerWhenNotStoreOK=false``). Bodies
over ``compress_msg_body_over_howmuch`` (4 KiB) are zlib-compressed with sysFlag bit 0x1; batches never are.
"""

from __future__ import annotations

import inspect
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from client.errors import MessageTooLargeError, MQClientError, NoBrokerAvailableError, RouteNotFoundError
from client.instance import ClientInstance
from client.message import Message, MessageQueue
from client.producer.selector import LatencyFaultTolerance, QueueSelector, select_by_key
from client.results import LocalTransactionState, SendResult, SendStatus
from client.route import TopicRoute
from protocol.codes import ResponseCode
from protocol.errors import BrokerError, RemotingError
from protocol.headers import CheckTransactionStateRequestHeader, EndTransactionRequestHeader, SendMessageRequestHeader
from protocol.message import (
    SYSFLAG_COMPRESSED,
    TRANSACTION_PREPARED_TYPE,
    BatchItem,
    MessageExt,
    PropertyKey,
    create_uniq_id,
    encode_batch,
    encode_properties,
)

AUTO_CREATE_TOPIC_KEY = "TBW102"
_STATUS_BY_CODE: dict[int, SendStatus] = {
    ResponseCode.SUCCESS: SendStatus.SEND_OK,
    ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE,
}

QueueSelectorFn = Callable[[list[MessageQueue], Message, Any], MessageQueue]
LocalTransaction = Callable[[Message, Any], LocalTransactionState | Awaitable[LocalTransactionState]]
CheckListener = Callable[[MessageExt], LocalTransactionState | Awaitable[LocalTransactionState]]


class Producer:
    """``async with Producer("group", namesrv_addr="127.0.0.1:9876") as p: await p.send(Message(...))``."""

    def __init__(
        self,
        group: str,
        namesrv_addr: str | None = None,
        *,
        instance: ClientInstance | None = None,
        instance_name: str | None = None,
        send_timeout_ms: int = 3000,
        retry_times_when_send_failed: int = 2,
        compress_msg_body_over_howmuch: int = 4096,
        max_message_size: int = 4 * 1024 * 1024,
        default_topic_queue_nums: int = 4,
        send_latency_fault_enable: bool = False,
        check_listener: CheckListener | None = None,
    ) -> None:
        self.group = group
        self._own_instance = instance is None
        self.instance = instance or ClientInstance(namesrv_addr, instance_name=instance_name)
        self.send_timeout = send_timeout_ms / 1000
        self.retry_times = retry_times_when_send_failed
        self.compress_over = compress_msg_body_over_howmuch
        self.max_message_size = max_message_size
        self.default_topic_queue_nums = default_topic_queue_nums
        self._fault = LatencyFaultTolerance() if send_latency_fault_enable else None
        self._selector = QueueSelector(self._fault)
        self._topics: set[str] = set()
        self._check_listener = check_listener
        self._started = False

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        self.instance.register_producer(self.group, self)
        await self.instance.start()
        self._started = True

    async def close(self) -> None:
        if not self._started:
            return
        self._started = False
        await self.instance.unregister_from_brokers(self.group, None)
        self.instance.unregister(self.group)
        await self.instance.close()

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def topics(self) -> set[str]:
        return set(self._topics)

    def heartbeat_data(self) -> dict[str, Any]:
        return {"groupName": self.group}

    # -- routing ---------------------------------------------------------------------------------------------------

    async def _publish_route(self, topic: str) -> tuple[TopicRoute, list[MessageQueue]]:
        first_time = topic not in self._topics
        self._topics.add(topic)
        route = await self.instance.get_route(topic)
        if route is not None:
            queues = route.publish_queues()
            if queues:
                if first_time:
                    await self.instance.send_heartbeat_to_all()
                return route, queues
        default = await self.instance.get_route(AUTO_CREATE_TOPIC_KEY)
        if default is None:
            raise RouteNotFoundError(f"No route info of this topic: {topic}")
        queues = []
        for qd in default.queues:
            if default.master_addr(qd.broker_name) is None:
                continue
            n = min(self.default_topic_queue_nums, qd.write_queue_nums)
            queues.extend(MessageQueue(topic, qd.broker_name, i) for i in range(n))
        if not queues:
            raise RouteNotFoundError(f"No route info of this topic: {topic}")
        if first_time:
            await self.instance.send_heartbeat_to_all()
        return default, queues

    # -- message preparation ---------------------------------------------------------------------------------------

    def _prepare(
        self, msg: Message, *, sys_flag: int = 0, extra: dict[str, str] | None = None
    ) -> tuple[bytes, int, dict[str, str]]:
        if not msg.topic:
            raise MQClientError("the specified topic is blank")
        body = msg.body
        if not body:
            raise MQClientError("the message body is empty", "the message body length is zero")
        if len(body) > self.max_message_size:
            raise MessageTooLargeError(
                f"the message body size over max value, MAX: {self.max_message_size}",
            )
        props = msg.wire_properties()
        props.setdefault(PropertyKey.UNIQ_KEY, create_uniq_id())
        if extra:
            props.update(extra)
        if len(body) > self.compress_over:
            body = zlib.compress(body, 5)
            sys_flag |= SYSFLAG_COMPRESSED
        return body, sys_flag, props

    def _header(
        self, mq: MessageQueue, sys_flag: int, props: str, flag: int, *, batch: bool = False
    ) -> SendMessageRequestHeader:
        return SendMessageRequestHeader(
            producer_group=self.group,
            topic=mq.topic,
            default_topic=AUTO_CREATE_TOPIC_KEY,
            default_topic_queue_nums=self.default_topic_queue_nums,
            queue_id=mq.queue_id,
            sys_flag=sys_flag,
            born_timestamp=int(time.time() * 1000),
            flag=flag,
            properties=props,
            reconsume_times=0,
            batch=batch,
        )

    # -- sends -----------------------------------------------------------------------------------------------------

    async def send(
        self,
        msg: Message,
        *,
        queue: MessageQueue | None = None,
        selector: QueueSelectorFn | None = None,
        arg: Any = None,
        sharding_key: object | None = None,
        timeout: float | None = None,
    ) -> SendResult:
        """Send and await the broker's reply. ``queue``, ``selector(queues, msg, arg)`` or ``sharding_key`` pin the
        queue (ordered messages; no retry on another queue then)."""
        body, sys_flag, props = self._prepare(msg)
        return await self._send_with_retry(msg, body, sys_flag, props, queue, selector, arg, sharding_key, timeout)

    async def send_orderly(self, msg: Message, sharding_key: object, *, timeout: float | None = None) -> SendResult:
        return await self.send(msg, sharding_key=sharding_key, timeout=timeout)

    async def _send_with_retry(
        self,
        msg: Message,
        body: bytes,
        sys_flag: int,
        props: dict[str, str],
        queue: MessageQueue | None,
        selector: QueueSelectorFn | None,
        arg: Any,
        sharding_key: object | None,
        timeout: float | None,
        *,
        batch: bool = False,
    ) -> SendResult:
        timeout = timeout or self.send_timeout
        deadline = time.monotonic() + timeout
        pinned = queue is not None or selector is not None or sharding_key is not None
        attempts = 1 if pinned else 1 + self.retry_times
        props_text = encode_properties(props) if not batch else ""
        last_broker: str | None = None
        last_exc: Exception | None = None
        for _attempt in range(attempts):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            _route, queues = await self._publish_route(msg.topic)
            if queue is not None:
                mq = queue
            elif selector is not None:
                mq = selector(queues, msg, arg)
            elif sharding_key is not None:
                mq = select_by_key(queues, sharding_key)
            else:
                mq = self._selector.select(queues, last_broker)
            last_broker = mq.broker_name
            try:
                addr = await self.instance.find_broker_addr(mq)
                header = self._header(mq, sys_flag, props_text, msg.flag, batch=batch)
                started = time.monotonic()
                code, resp = await self.instance.api.send(addr, header, body, left, batch=batch)
                if self._fault is not None:
                    self._fault.update(mq.broker_name, (time.monotonic() - started) * 1000)
            except (RemotingError, NoBrokerAvailableError) as exc:
                if self._fault is not None:
                    self._fault.update(mq.broker_name, 0, isolation=True)
                last_exc = exc
                retriable = exc.retriable if isinstance(exc, RemotingError) else True
                if isinstance(exc, BrokerError) and exc.refresh_route:
                    await self._refresh_quietly(msg.topic)
                if not retriable:
                    raise
                continue
            uniq = props.get(PropertyKey.UNIQ_KEY, "") if not batch else ""
            return SendResult(
                send_status=_STATUS_BY_CODE.get(code, SendStatus.SEND_OK),
                msg_id=uniq or resp.msg_id,
                offset_msg_id=resp.msg_id,
                message_queue=MessageQueue(mq.topic, mq.broker_name, resp.queue_id),
                queue_offset=resp.queue_offset,
                transaction_id=resp.transaction_id,
            )
        if last_exc is not None:
            raise last_exc
        raise MQClientError(f"send to topic {msg.topic} timed out after {timeout:.1f}s")

    async def _refresh_quietly(self, topic: str) -> None:
        try:
            await self.instance.get_route(topic, refresh=True)
        except RemotingError:
            pass

    async def send_oneway(self, msg: Message, *, queue: MessageQueue | None = None) -> None:
        """Fire and forget: no reply is awaited, nothing is retried."""
        body, sys_flag, props = self._prepare(msg)
        _route, queues = await self._publish_route(msg.topic)
        mq = queue or self._selector.select(queues)
        addr = await self.instance.find_broker_addr(mq)
        header = self._header(mq, sys_flag, encode_properties(props), msg.flag)
        await self.instance.api.send_oneway(addr, header, body)

    async def send_batch(
        self, msgs: list[Message], *, queue: MessageQueue | None = None, timeout: float | None = None
    ) -> SendResult:
        """One SEND_BATCH_MESSAGE: every message to the same topic, stored as separate messages in one queue."""
        if not msgs:
            raise MQClientError("the batch is empty")
        topic = msgs[0].topic
        items: list[BatchItem] = []
        uniq: list[str] = []
        for m in msgs:
            if m.topic != topic:
                raise MQClientError("the topic of the messages in one batch should be the same")
            if m.delay_level > 0:
                raise MQClientError("TimeDelayLevel is not supported for batching")
            if not m.body:
                raise MQClientError("the message body is empty")
            props = m.wire_properties()
            props.setdefault(PropertyKey.UNIQ_KEY, create_uniq_id())
            uniq.append(props[PropertyKey.UNIQ_KEY])
            items.append(BatchItem(m.body, props, m.flag))
        body = encode_batch(items)
        if len(body) > self.max_message_size:
            raise MessageTooLargeError(f"the batch size {len(body)} is over max value, MAX: {self.max_message_size}")
        result = await self._send_with_retry(msgs[0], body, 0, {}, queue, None, None, None, timeout, batch=True)
        return SendResult(
            result.send_status,
            ",".join(uniq),
            result.offset_msg_id,
            result.message_queue,
            result.queue_offset,
            result.transaction_id,
        )

    # -- transactions ----------------------------------------------------------------------------------------------

    async def send_message_in_transaction(
        self, msg: Message, local_transaction: LocalTransaction, arg: Any = None
    ) -> tuple[SendResult, LocalTransactionState]:
        """Send a half message, run ``local_transaction(msg, arg)``, then commit or roll back (END_TRANSACTION)."""
        if msg.delay_level > 0:
            raise MQClientError("delay level is not supported for transaction messages")
        body, sys_flag, props = self._prepare(
            msg,
            sys_flag=TRANSACTION_PREPARED_TYPE,
            extra={PropertyKey.TRAN_MSG: "true", PropertyKey.PGROUP: self.group},
        )
        result = await self._send_with_retry(msg, body, sys_flag, props, None, None, None, None, None)
        if result.send_status is not SendStatus.SEND_OK:
            state = LocalTransactionState.ROLLBACK_MESSAGE
        else:
            try:
                out = local_transaction(msg, arg)
                state = await out if inspect.isawaitable(out) else out
            except Exception:
                state = LocalTransactionState.UNKNOW
        await self._end_transaction(result, state, props[PropertyKey.UNIQ_KEY])
        return result, state

    async def _end_transaction(self, result: SendResult, state: LocalTransactionState, uniq: str) -> None:
        from protocol.message import decode_offset_msg_id

        _ip, _port, phys = decode_offset_msg_id(result.offset_msg_id.split(",")[0])
        addr = await self.instance.find_broker_addr(result.message_queue)
        header = EndTransactionRequestHeader(
            producer_group=self.group,
            tran_state_table_offset=result.queue_offset,
            commit_log_offset=phys,
            commit_or_rollback=state.value,
            msg_id=uniq,
            from_transaction_check=False,
            transaction_id=result.transaction_id or uniq,
        )
        await self.instance.api.end_transaction(addr, header)

    async def check_transaction(self, broker_addr: str, h: CheckTransactionStateRequestHeader, msg: MessageExt) -> None:
        """Answer a broker's CHECK_TRANSACTION_STATE with the check listener's verdict."""
        if self._check_listener is None:
            return
        try:
            out = self._check_listener(msg)
            state = await out if inspect.isawaitable(out) else out
        except Exception:
            state = LocalTransactionState.UNKNOW
        header = EndTransactionRequestHeader(
            producer_group=self.group,
            tran_state_table_offset=h.tran_state_table_offset,
            commit_log_offset=h.commit_log_offset,
            commit_or_rollback=state.value,
            msg_id=h.msg_id or msg.msg_id,
            from_transaction_check=True,
            transaction_id=h.transaction_id,
        )
        try:
            await self.instance.api.end_transaction(broker_addr, header)
        except RemotingError:
            pass
