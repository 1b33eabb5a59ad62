"""Producer: send (awaits the broker's reply), send_oneway, send_batch, ordered sends, transactions.

* Sends use SEND_MESSAGE_V2 (batches SEND_BATCH_MESSAGE). A topic the name server does not know goes out on the
  TBW102 route (the broker auto-creates it when allowed), as the official clients do.
* ``send`` retries retriable errors (connection refused or lost, timeout, SYSTEM_BUSY, TOPIC_NOT_EXIST…) for as
  long as ``send_timeout_ms`` lasts: ``retry_times_when_send_failed`` (2) times at once, each on another broker
  when the topic has one (J's behaviour), then with a backoff (50 ms doubling to 1 s) and a fresh connection on each
  try (aiokafka's), so a broker restart shorter than the budget costs latency, not an exception; a lost or refused
  connection also refreshes the topic's route at once, a timed-out send in the background (beyond J, which waits
  for its poll: a failover's new master is found on the next try). Only when the
  budget is spent does the last error reach the caller. A FLUSH_* or SLAVE_NOT_AVAILABLE reply is returned, not
  retried (``retry_another_broker_when_not_store_ok``). Messages sent to a fixed queue (a queue, a selector or a
  sharding key: ordered messages) are retried on that queue only.
* Topic permissions are honoured on every route: only writable queues are chosen, and a topic that has a route
  but no writable queue (``wipeWritePerm``, ``updateTopicPerm -p 4``) fails at once instead of falling back to
  TBW102, whose perm is honoured as well.
* With ``send_latency_fault_enable`` a broker that answered slowly or failed is avoided for a while (selector.py).
* Bodies over ``compress_msg_body_over_howmuch`` (4 KiB) are zlib-compressed and flagged with sysFlag bit 0x1;
  batches never are. Bodies over ``max_message_size`` (4 MiB) are refused before sending. Each message gets a
  UNIQ_KEY (its ``msg_id``).
* Transactions: ``send_message_in_transaction`` sends a half message, runs the local transaction, then ends it
  with a oneway END_TRANSACTION; a broker's CHECK_TRANSACTION_STATE is answered from ``check_listener``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Final, Unpack

from client._aio import StartClose
from client._log import get_logger
from client.config import ClientConfig, ProducerConfig, split_options
from client.errors import MessageTooLargeError, MQClientError, NoBrokerAvailableError, RouteNotFoundError
from client.instance import ClientInstance
from client.message import Message, MessageQueue, validate_group, validate_topic
from client.namespace import wrap_message
from client.producer.options import ProducerOptions
from client.producer.request import RequestReply
from client.producer.selector import LatencyFaultTolerance, QueueSelector, select_by_key
from client.producer.send_result import STATUS_BY_CODE, send_result
from client.producer.send_result import DirectSend as DirectSend
from client.reply import is_reply
from client.results import LocalTransactionState, SendResult, SendStatus
from client.route import TopicRoute
from client.trace import INNER_TRACE_GROUP_PREFIX, TraceDispatcher, pub_record
from protocol.batch import encode_batch_texts
from protocol.bodies import PERM_WRITE
from protocol.command import RemotingCommand
from protocol.errors import BrokerError, ConnectionClosedError, RemotingError, RequestTimeoutError
from protocol.headers import (
    CheckTransactionStateRequestHeader,
    EndTransactionRequestHeader,
    SendMessageRequestHeader,
    SendMessageResponseHeader,
)
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, encode_properties
from protocol.msg_id import decode_offset_msg_id
from protocol.namespace import wrap
from protocol.record import SYSFLAG_COMPRESSED, TRANSACTION_PREPARED_TYPE
from protocol.remoting.handler import Channel
from protocol.rules import AUTO_CREATE_TOPIC
from protocol.trace import DEFAULT_TRACE_TOPIC
from runtime.msg_id import create_uniq_id, create_uniq_ids

_log = get_logger("rocketq.client.producer")
_UNIQ_KEY: Final = PropertyKey.UNIQ_KEY
# a plain message's properties in a batch, up to its unique id (the order wire_properties gives: WAIT, then UNIQ_KEY)
_WAIT_TRUE: Final = f"{PropertyKey.WAIT}\x01true\x02{PropertyKey.UNIQ_KEY}\x01"
_WAIT_FALSE: Final = f"{PropertyKey.WAIT}\x01false\x02{PropertyKey.UNIQ_KEY}\x01"

AUTO_CREATE_TOPIC_KEY = AUTO_CREATE_TOPIC
# after the immediate retries, a failed send waits this long before the next try, doubling up to the max
_BACKOFF_FIRST = 0.05
_BACKOFF_MAX = 1.0

QueueSelectorFn = Callable[[list[MessageQueue], Message, Any], MessageQueue]
LocalTransaction = Callable[[Message, Any], LocalTransactionState | Awaitable[LocalTransactionState]]
CheckListener = Callable[[MessageExt], LocalTransactionState | Awaitable[LocalTransactionState]]


class Producer(RequestReply, StartClose):
    """``async with Producer("group", namesrv_addr="127.0.0.1:9876") as p: await p.send(Message(...))``.

    Options are the fields of ``ClientConfig`` (``instance_name``, ``serialize_type``…) and ``ProducerConfig``
    (``send_timeout_ms``, ``retry_times_when_send_failed``…), typed by ``ProducerOptions`` (a misspelt option is a
    type error). ``instance`` shares another client's connections.
    """

    def __init__(
        self,
        group: str,
        namesrv_addr: str | None = None,
        *,
        instance: ClientInstance | None = None,
        check_listener: CheckListener | None = None,
        **options: Unpack[ProducerOptions],
    ) -> None:
        validate_group(group)
        client_cfg, self.config = split_options({"namesrv_addr": namesrv_addr, **options}, ProducerConfig)
        self.namespace = self.config.namespace
        self.group = wrap(self.namespace, group)
        self.instance = instance or ClientInstance(config=client_cfg)
        self._fault = LatencyFaultTolerance() if self.config.send_latency_fault_enable else None
        self._selector = QueueSelector(self._fault)
        self._topics: set[str] = set()
        # topic → (the cached route, its writable queues): valid while the instance caches that very route object
        # (a refresh stores a new one), so a send does not rebuild the queue list
        self._pub: dict[str, tuple[TopicRoute, list[MessageQueue]]] = {}
        self._check_listener = check_listener
        trace_topic = self.config.trace_topic or DEFAULT_TRACE_TOPIC
        self._trace = TraceDispatcher(self._trace_sender, trace_topic) if self.config.enable_trace else None
        self._started = False
        self._registered = False

    @property
    def client_config(self) -> ClientConfig:
        return self.instance.config

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self, *, register: bool = True) -> None:
        """Start the instance; ``register=False`` keeps the group out of heartbeats (a consumer's inner producer)."""
        if self._started:
            return
        if register:
            self.instance.register_producer(self)
        self._registered = register
        await self.instance.start()
        self._started = True

    async def close(self) -> None:
        """Unregister from the brokers (UNREGISTER_CLIENT) and release the instance."""
        if not self._started:
            return
        self._started = False
        if self._trace is not None:
            await self._trace.close()
        if self._registered:
            await self.instance.unregister_from_brokers(self.group, None)
            self.instance.unregister_producer(self)
        await self.instance.close()

    async def _trace_sender(self) -> Producer:
        """The inner producer that sends this producer's traces (on the same instance, not heartbeated)."""
        p = Producer(f"{INNER_TRACE_GROUP_PREFIX}-{self.group}-PRODUCE", instance=self.instance)
        await p.start(register=False)
        return p

    def _check_started(self) -> None:
        if not self._started:
            raise MQClientError(f"producer {self.group} is not started (use `async with` or `await start()`)")

    def topics(self) -> set[str]:
        return set(self._topics)

    # -- routing ---------------------------------------------------------------------------------------------------

    def _cached_queues(self, topic: str) -> list[MessageQueue] | None:
        """``publish_queues``' answer while the cache still matches the topic's route, without a coroutine."""
        hit = self._pub.get(topic)
        return hit[1] if hit is not None and self.instance.routes.get(topic) is hit[0] else None

    async def publish_queues(self, topic: str) -> list[MessageQueue]:
        """The topic's writable queues; for an unknown topic, the queues it would get from TBW102."""
        cached = self._cached_queues(topic)
        if cached is not None:
            return cached
        first_time = topic not in self._topics
        self._topics.add(topic)
        queues = await self._queues(topic)
        if first_time:  # let the brokers know this producer group at once (J sends a heartbeat too)
            await self.instance.send_heartbeat_to_all()
        return queues

    async def _queues(self, topic: str) -> list[MessageQueue]:
        """J ``tryToFindTopicPublishInfo``: a topic the name server routes is sent only to its WRITABLE queues (none
        after ``wipeWritePerm`` or ``updateTopicPerm -p 4``: then the send fails, never falls back); only a topic
        with no route at all borrows TBW102's writable brokers, whose perm is honoured the same way."""
        route = await self.instance.get_route(topic)
        if route is not None and not route.publish_queues():  # a cached route may predate addWritePerm
            route = await self.instance.get_route(topic, refresh=True) or route
        if route is not None:
            queues = route.publish_queues()
            if not queues:
                raise RouteNotFoundError(
                    f"No route info of this topic: {topic} (no writable queue: the topic or its brokers are not "
                    "writable, e.g. after wipeWritePerm)"
                )
            self._pub[topic] = (route, queues)
            return queues
        default = await self.instance.get_route(AUTO_CREATE_TOPIC_KEY)
        queues = []
        if default is not None:
            for qd in default.queues:
                if default.master_addr(qd.broker_name) is None or not qd.perm & PERM_WRITE:
                    continue
                n = min(self.config.default_topic_queue_nums, qd.write_queue_nums)
                queues.extend(MessageQueue(topic, qd.broker_name, i) for i in range(n))
        if not queues:
            raise RouteNotFoundError(f"No route info of this topic: {topic}")
        return queues

    # -- message preparation ---------------------------------------------------------------------------------------

    def _prepare(
        self, msg: Message, *, sys_flag: int = 0, extra: dict[str, str] | None = None
    ) -> tuple[bytes, int, dict[str, str]]:
        validate_topic(msg.topic, sending=True)
        body = msg.body
        if not body:
            raise MQClientError("the message body is empty", "the message body length is zero")
        if len(body) > self.config.max_message_size:
            raise MessageTooLargeError(f"the message body size over max value, MAX: {self.config.max_message_size}")
        props = msg.wire_properties()
        props.setdefault(PropertyKey.UNIQ_KEY, create_uniq_id())
        if extra:
            props.update(extra)
        if len(body) > self.config.compress_msg_body_over_howmuch:
            body = zlib.compress(body, self.config.compress_level)
            sys_flag |= SYSFLAG_COMPRESSED
        return body, sys_flag, props

    def _header(
        self,
        mq: MessageQueue,
        sys_flag: int,
        props: str,
        flag: int,
        *,
        batch: bool = False,
        reconsume_times: int | None = None,
        max_reconsume_times: int | None = None,
    ) -> SendMessageRequestHeader:
        return SendMessageRequestHeader.of(
            self.group,
            mq.topic,
            AUTO_CREATE_TOPIC_KEY,
            self.config.default_topic_queue_nums,
            mq.queue_id,
            sys_flag,
            int(time.time() * 1000),
            flag,
            props,
            reconsume_times,
            batch,
            max_reconsume_times,
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
        """Send and await the broker's reply.

        ``queue``, ``selector(queues, msg, arg)`` or ``sharding_key`` pin the queue (ordered messages: the same key
        always lands in the same queue while the topic's queue count holds); a pinned send is not retried elsewhere.
        """
        self._check_started()
        if self.namespace and not is_reply(msg.properties):  # a reply's <cluster>_REPLY_TOPIC is the broker's own
            msg = wrap_message(self.namespace, msg)
        started = int(time.time() * 1000) if self._trace is not None else 0
        body, sys_flag, props = self._prepare(msg)
        if queue is None and selector is not None:
            queues = await self.publish_queues(msg.topic)
            queue = selector(queues, msg, arg)
        elif queue is None and sharding_key is not None:
            queue = select_by_key(await self.publish_queues(msg.topic), sharding_key)
        result = await self._send(
            msg.topic, body, sys_flag, encode_properties(props), msg.flag, queue, timeout, props, reply=is_reply(props)
        )
        trace = self._trace
        if trace is not None and result.trace_on and msg.topic != trace.trace_topic:
            trace.append([pub_record(self.group, msg, len(msg.body), result, started)])
        return result

    async def send_orderly(self, msg: Message, sharding_key: object, *, timeout: float | None = None) -> SendResult:
        """``send(msg, sharding_key=key)``: messages with one key keep their order in one queue."""
        return await self.send(msg, sharding_key=sharding_key, timeout=timeout)

    async def _send(
        self,
        topic: str,
        body: bytes,
        sys_flag: int,
        props_text: str,
        flag: int,
        queue: MessageQueue | None,
        timeout: float | None,
        props: dict[str, str] | None,
        *,
        batch: bool = False,
        reconsume_times: int | None = None,
        max_reconsume_times: int | None = None,
        reply: bool = False,
    ) -> SendResult:
        timeout = timeout or self.config.send_timeout_ms / 1000
        deadline = time.monotonic() + timeout
        quick = 1 + self.config.retry_times_when_send_failed  # J's immediate retries, then with a backoff
        backoff = _BACKOFF_FIRST
        last_broker: str | None = None
        last_exc: Exception | None = None
        attempt = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            queues = self._cached_queues(topic)
            if queues is None:
                queues = await self.publish_queues(topic)  # also the route (and broker address) of the topic
            mq = queue if queue is not None else self._selector.select(queues, last_broker)
            last_broker = mq.broker_name
            header = self._header(
                mq,
                sys_flag,
                props_text,
                flag,
                batch=batch,
                reconsume_times=reconsume_times,
                max_reconsume_times=max_reconsume_times,
            )
            started = time.monotonic()
            attempt += 1
            try:
                route = self.instance.routes.get(topic)  # the topic's own route first, without a coroutine
                addr = route.master_addr(mq.broker_name) if route is not None else None
                if addr is None:
                    addr = await self.instance.find_broker_addr(mq)
                code, resp = await self.instance.api.send(addr, header, body, left, batch=batch, reply=reply)
            except (RemotingError, NoBrokerAvailableError) as exc:
                if self._fault is not None:
                    self._fault.update(mq.broker_name, (time.monotonic() - started) * 1000, isolation=True)
                last_exc = exc
                retriable = exc.retriable if isinstance(exc, RemotingError) else True
                if not retriable:
                    raise
                if isinstance(exc, (NoBrokerAvailableError, ConnectionClosedError)) or (
                    isinstance(exc, BrokerError) and exc.refresh_route
                ):  # a broker whose connection is gone may have been replaced (a failover): ask for the route now
                    await self._refresh_quietly(topic)
                elif isinstance(exc, RequestTimeoutError):  # a silent broker may have been replaced meanwhile: the
                    # next send should find out, without making this one later than its timeout
                    self.instance.spawn(self._refresh_quietly(topic), "route refresh after a send timeout")
                _log.info("send failed, retrying", topic=topic, broker=mq.broker_name, attempt=attempt, error=str(exc))
                if attempt >= quick:  # every broker tried: wait a little (the broker may be restarting), reconnect
                    await asyncio.sleep(max(0.0, min(backoff, deadline - time.monotonic())))
                    backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            if self._fault is not None:
                self._fault.update(mq.broker_name, (time.monotonic() - started) * 1000)
            status = STATUS_BY_CODE.get(code, SendStatus.SEND_OK)
            if (
                status is not SendStatus.SEND_OK
                and self.config.retry_another_broker_when_not_store_ok
                and queue is None
                and attempt < quick
            ):
                continue
            return send_result(status, props.get(PropertyKey.UNIQ_KEY, "") if props else "", mq, resp)
        if last_exc is not None:
            raise last_exc
        raise RequestTimeoutError(f"send to topic {topic} timed out after {timeout:.1f}s")

    # -- a plain send written by the caller's own thread (client.sync's direct path) --------------------------------

    def direct_request(self, msg: Message) -> DirectSend | None:
        """What a plain ``send(msg)`` would write now, for a caller that does the write and the read itself: the
        request, its broker address and queue. Only when nothing else is left to decide — started, the topic's
        queues cached, no TLS, no RPC hook (ACL signs on the loop), no latency fault tolerance, no namespace or
        tracing; else None and
        ``send`` does it all. Raises as ``send`` does for a message that is not sendable."""
        self._check_started()
        at = self._direct_queue(msg.topic)
        if at is None:
            return None
        body, sys_flag, props = self._prepare(msg)
        if is_reply(props):
            return None
        props_text = encode_properties(props)
        cmd = self.instance.api.send_request(self._header(at[1], sys_flag, props_text, msg.flag), body)
        if cmd is None:
            return None
        uniq = props.get(PropertyKey.UNIQ_KEY, "")
        return DirectSend(at[0], cmd, at[1], uniq, msg.topic, body, sys_flag, props_text, props, msg.flag, False)

    def direct_batch_request(self, msgs: list[Message]) -> DirectSend | None:
        """``direct_request`` for ``send_batch(msgs)``: one SEND_BATCH_MESSAGE."""
        self._check_started()
        topic, body, uniq = self._batch_body(msgs)
        at = self._direct_queue(topic)
        if at is None:
            return None
        cmd = self.instance.api.send_request(self._header(at[1], 0, "", 0, batch=True), body, batch=True)
        if cmd is None:
            return None
        return DirectSend(at[0], cmd, at[1], ",".join(uniq), topic, body, 0, "", None, 0, True)

    def _direct_queue(self, topic: str) -> tuple[str, MessageQueue] | None:
        """The broker address and queue of a direct send to ``topic``, or None when ``_send`` must decide."""
        queues = self._cached_queues(topic)
        route = self.instance.routes.get(topic)
        if queues is None or route is None or self._fault is not None or self.instance.config.use_tls:
            return None
        if self.namespace or self._trace is not None:  # ``send`` wraps names and records traces
            return None
        mq = self._selector.select(queues, None)
        addr = route.master_addr(mq.broker_name)
        return None if addr is None else (addr, mq)

    async def send_direct_again(self, d: DirectSend, timeout: float) -> SendResult:
        """``send``'s own handling (retries, route refresh, errors) for a direct send that did not end in a result:
        the same message(s), UNIQ_KEYs included, within what is left of the timeout."""
        result = await self._send(
            d.topic, d.body, d.sys_flag, d.props_text, d.flag, None, timeout, d.props, batch=d.batch
        )
        return replace(result, msg_id=d.uniq) if d.batch else result

    def direct_result(self, d: DirectSend, resp: RemotingCommand) -> SendResult | None:
        """The SendResult of a direct send's reply; None when ``send``'s own handling must take over (an error
        code, or a not-stored status it would retry on another broker)."""
        status = STATUS_BY_CODE.get(resp.code)
        if status is None or (status is not SendStatus.SEND_OK and self.config.retry_another_broker_when_not_store_ok):
            return None
        return send_result(status, d.uniq, d.mq, SendMessageResponseHeader.from_ext_fields(resp.ext_fields))

    async def _refresh_quietly(self, topic: str) -> None:
        try:
            await self.instance.get_route(topic, refresh=True)
        except RemotingError:
            pass

    async def send_oneway(self, msg: Message, *, queue: MessageQueue | None = None) -> None:
        """Fire and forget: no reply is awaited, nothing is retried."""
        self._check_started()
        msg = wrap_message(self.namespace, msg)
        body, sys_flag, props = self._prepare(msg)
        mq = queue or self._selector.select(await self.publish_queues(msg.topic))
        addr = await self.instance.find_broker_addr(mq)
        header = self._header(mq, sys_flag, encode_properties(props), msg.flag)
        await self.instance.api.send_oneway(addr, header, body)

    async def send_batch(
        self, msgs: list[Message], *, queue: MessageQueue | None = None, timeout: float | None = None
    ) -> SendResult:
        """One SEND_BATCH_MESSAGE: messages of one topic, stored as separate messages in one queue, in order.

        ``msg_id`` and ``offset_msg_id`` of the result are comma-joined, ``queue_offset`` is the first message's."""
        self._check_started()
        topic, body, uniq = self._batch_body([wrap_message(self.namespace, m) for m in msgs])
        result = await self._send(topic, body, 0, "", 0, queue, timeout, None, batch=True)
        return replace(result, msg_id=",".join(uniq))  # a batch's msg_id: its UNIQ_KEYs, comma-joined

    def _batch_body(self, msgs: list[Message]) -> tuple[str, bytes, list[str]]:
        """A batch's topic, SEND_BATCH_MESSAGE body and the messages' UNIQ_KEYs; raises for a batch J refuses."""
        if not msgs:
            raise MQClientError("the batch is empty")
        topic = msgs[0].topic
        validate_topic(topic, sending=True)
        uniq = create_uniq_ids(len(msgs))
        items: list[tuple[int, bytes, str]] = []
        add = items.append
        for i, m in enumerate(msgs):
            if m.topic != topic:
                raise MQClientError("the topic of the messages in one batch should be the same")
            if m.delay_level > 0:
                raise MQClientError("TimeDelayLevel is not supported for batching")
            if m.deliver_time_ms or m.delay_ms:
                raise MQClientError("a delivery time is not supported for batching")
            if not m.body:
                raise MQClientError("the message body is empty")
            if m.properties or m.tags or m.keys:
                props = m.wire_properties()
                uid = props.setdefault(_UNIQ_KEY, uniq[i])
                uniq[i] = uid
                add((m.flag, m.body, encode_properties(props)))
            else:  # what wire_properties + encode_properties give a plain message, without the dict
                add((m.flag, m.body, f"{_WAIT_TRUE if m.wait_store_ok else _WAIT_FALSE}{uniq[i]}\x02"))
        body = encode_batch_texts(items)
        if len(body) > self.config.max_message_size:
            raise MessageTooLargeError(
                f"the batch size {len(body)} is over max value, MAX: {self.config.max_message_size}"
            )
        return topic, body, uniq

    async def send_for_retry(self, retry_topic: str, msg: MessageExt, max_reconsume_times: int) -> SendResult:
        """A consumer's fallback when CONSUMER_SEND_MSG_BACK fails (J ``sendMessageBack``): the message itself to
        ``%RETRY%<group>`` with RETRY_TOPIC, ORIGIN_MESSAGE_ID, one more reconsume time and a delay of
        3 + reconsume times."""
        self._check_started()
        props = {
            k: v
            for k, v in msg.properties.items()
            if k not in (PropertyKey.TRANSACTION_PREPARED, PropertyKey.MIN_OFFSET, PropertyKey.MAX_OFFSET)
        }
        props.setdefault(PropertyKey.ORIGIN_MESSAGE_ID, msg.msg_id)
        props[PropertyKey.RETRY_TOPIC] = msg.topic
        props[PropertyKey.DELAY] = str(3 + msg.reconsume_times)
        props[PropertyKey.UNIQ_KEY] = create_uniq_id()
        body, sys_flag = msg.body, 0
        if len(body) > self.config.compress_msg_body_over_howmuch:
            body, sys_flag = zlib.compress(body, self.config.compress_level), SYSFLAG_COMPRESSED
        return await self._send(
            retry_topic,
            body,
            sys_flag,
            encode_properties(props),
            msg.flag,
            None,
            None,
            props,
            reconsume_times=msg.reconsume_times + 1,
            max_reconsume_times=max_reconsume_times,
        )

    # -- transactions ----------------------------------------------------------------------------------------------

    async def send_message_in_transaction(
        self, msg: Message, local_transaction: LocalTransaction, arg: Any = None
    ) -> tuple[SendResult, LocalTransactionState]:
        """Send a half message, run ``local_transaction(msg, arg)`` (sync or async), then commit or roll back.

        A local transaction that raises or returns UNKNOW leaves the decision to the broker's check-back, which
        ``check_listener`` answers."""
        self._check_started()
        msg = wrap_message(self.namespace, msg)
        if msg.delay_level > 0:
            raise MQClientError("delay level is not supported for transaction messages")
        body, sys_flag, props = self._prepare(
            msg,
            sys_flag=TRANSACTION_PREPARED_TYPE,
            extra={PropertyKey.TRANSACTION_PREPARED: "true", PropertyKey.PRODUCER_GROUP: self.group},
        )
        result = await self._send(msg.topic, body, sys_flag, encode_properties(props), msg.flag, None, None, props)
        if result.send_status is not SendStatus.SEND_OK:
            state = LocalTransactionState.ROLLBACK_MESSAGE
        else:
            try:
                out = local_transaction(msg, arg)
                state = await out if inspect.isawaitable(out) else out
            except Exception as exc:
                _log.warning(
                    "local transaction raised; state unknown", error=repr(exc), msg_id=result.msg_id, exc_info=exc
                )
                state = LocalTransactionState.UNKNOW
        await self._end_transaction(result, state)
        return result, state

    async def _end_transaction(self, result: SendResult, state: LocalTransactionState) -> None:
        _ip, _port, phys = decode_offset_msg_id(result.offset_msg_id.split(",")[0])
        addr = await self.instance.find_broker_addr(result.message_queue)
        header = EndTransactionRequestHeader(
            producer_group=self.group,
            tran_state_table_offset=result.queue_offset,
            commit_log_offset=phys,
            commit_or_rollback=state.value,
            msg_id=result.msg_id,
            from_transaction_check=False,
            transaction_id=result.transaction_id or result.msg_id,
        )
        await self.instance.api.end_transaction(addr, header)

    async def check_transaction(self, channel: Channel, h: CheckTransactionStateRequestHeader, msg: MessageExt) -> None:
        """Answer a broker's CHECK_TRANSACTION_STATE with the check listener's verdict, on the same connection."""
        if self._check_listener is None:
            _log.warning("transaction check-back but no check_listener", group=self.group, msg_id=msg.msg_id)
            return
        try:
            out = self._check_listener(msg)
            state = await out if inspect.isawaitable(out) else out
        except Exception as exc:
            _log.warning("check listener raised; state unknown", error=repr(exc), msg_id=msg.msg_id, exc_info=exc)
            state = LocalTransactionState.UNKNOW
        header = EndTransactionRequestHeader(
            producer_group=self.group,
            tran_state_table_offset=h.tran_state_table_offset,
            commit_log_offset=h.commit_log_offset,
            commit_or_rollback=state.value,
            msg_id=msg.properties.get(PropertyKey.UNIQ_KEY) or h.msg_id or msg.msg_id,
            from_transaction_check=True,
            transaction_id=h.transaction_id,
        )
        if not channel.is_closed:
            self.instance.api.end_transaction_on(channel, header)
