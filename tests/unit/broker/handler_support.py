"""Broker handlers without a socket: ``wired_broker`` builds the real tables, store and services under a temporary
directory and registers every handler through ``broker.wiring.wire`` (the registry the server dispatches
through, middlewares included); ``dispatch`` runs one request through it on a ``FakeChannel`` and turns a
``HandlerError`` into the reply, as the connection does.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import structlog

from broker import topics as T
from broker.app import store_config
from broker.config import BrokerConfig, load_config
from broker.ha.service import HAService
from broker.services.broker_stats import BrokerStats
from broker.services.client_registry import ClientRegistry
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.group_state import GroupStateTables
from broker.services.long_polling import LongPollingService
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupConfig, SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from broker.wiring import Wiring, wire
from protocol.bodies import TopicConfig
from protocol.codes import LanguageCode
from protocol.command import RemotingCommand
from protocol.remoting import HandlerRegistry, RemotingClient
from protocol.remoting.handler import DeferredReply, HandlerError, RequestContext
from runtime.acl.hook import AclWatcher


class FakeChannel:
    """The connection a request arrived on, as a handler sees it (``protocol.remoting.handler.Channel``); requests
    towards the client are recorded and answered with ``reply`` (none by default)."""

    def __init__(self, language: LanguageCode = LanguageCode.JAVA) -> None:
        self.sent: list[RemotingCommand] = []
        self.reply: RemotingCommand | None = None
        self._language = language

    @property
    def peer(self) -> str:
        return "127.0.0.1:40000"

    @property
    def conn_id(self) -> int:
        return 1

    @property
    def language(self) -> LanguageCode:
        return self._language

    @property
    def is_closed(self) -> bool:
        return False

    @property
    def in_flight(self) -> int:
        return 1

    async def invoke(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        self.sent.append(cmd)
        if self.reply is None:
            raise TimeoutError("no reply")
        return self.reply

    def invoke_oneway(self, cmd: RemotingCommand) -> None:
        self.sent.append(cmd)

    def add_close_callback(self, cb: Callable[[Any], None]) -> None:
        """The client registry forgets a channel's clients when it closes; this one never closes."""


@dataclasses.dataclass
class WiredBroker:
    config: BrokerConfig
    store: MessageStore
    topics: TopicConfigTable
    groups: SubscriptionGroupTable
    offsets: ConsumerOffsetTable
    clients: ClientRegistry
    wiring: Wiring

    @property
    def registry(self) -> HandlerRegistry:
        return self.wiring.registry


@asynccontextmanager
async def wired_broker(tmp_path: Path, *, acl_home: Path | None = None, **overrides: Any) -> AsyncIterator[WiredBroker]:
    """A broker's handlers over a started store under ``tmp_path`` (RocketMQ key overrides), no server; with
    ``acl_home``, the ACL admin handlers too, over the ACL files under it (not watched)."""
    cfg = load_config(
        None,
        {
            "storePathRootDir": tmp_path,
            "brokerIP1": "127.0.0.1",
            "mappedFileSizeCommitLog": 1024 * 1024,
            "mappedFileSizeConsumeQueue": 1000 * 20,
            **overrides,
        },
    )
    config_dir = cfg.store.config_dir
    topics = TopicConfigTable(config_dir, cfg.identity, cfg.features)
    groups = SubscriptionGroupTable(config_dir, auto_create=cfg.features.auto_create_subscription_group)
    offsets = ConsumerOffsetTable(config_dir, cfg.features.flush_consumer_offset_interval)
    clients = ClientRegistry(cfg.network.channel_expired_timeout, lambda group: True)
    for table in (topics, groups, offsets):
        table.load()
    store = await asyncio.to_thread(MessageStore.open, store_config(cfg, port=10911))
    schedule = ScheduleService(store, config_dir, cfg.store.delay_levels_ms, cfg.features.flush_delay_offset_interval)
    schedule.load()
    remoting = RemotingClient()
    addr = "127.0.0.1:10911"
    ha = HAService(cfg, store, remoting, topics, offsets, schedule, groups, lambda: addr, lambda: None)
    stats = BrokerStats()
    wiring = wire(
        cfg, GroupStateTables(store, topics, groups, offsets, clients), LongPollingService(), schedule, stats, ha,
        AclWatcher(acl_home, interval_s=0) if acl_home is not None else None,
        on_config=lambda c: None, broker_addr=lambda: addr,
    )  # fmt: skip
    await store.start()
    try:
        yield WiredBroker(cfg, store, topics, groups, offsets, clients, wiring)
    finally:
        await remoting.close()
        await store.close()


async def dispatch(
    broker: WiredBroker, cmd: RemotingCommand, *, channel: FakeChannel | None = None, queued_s: float = 0.0
) -> RemotingCommand:
    """The reply the broker gives ``cmd`` (a request that waited ``queued_s`` before its handler ran)."""
    handler = broker.registry.get(cmd.code)
    assert handler is not None, f"no handler for request code {cmd.code}"
    received_at = asyncio.get_running_loop().time() - queued_s
    ctx = RequestContext(channel or FakeChannel(), cmd, structlog.get_logger("test"), received_at)
    try:
        got = handler(ctx, cmd)  # a plain handler's reply is taken as the connection takes it: no coroutine
        reply = got if got is None or isinstance(got, (RemotingCommand, DeferredReply)) else await got
        if isinstance(reply, DeferredReply):  # answered later (a SYNC_FLUSH send): as the connection would
            answered: asyncio.Future[RemotingCommand | None] = asyncio.get_running_loop().create_future()
            reply.bind(lambda _ctx, r: answered.set_result(r), ctx)
            reply = await answered
        resp = reply
    except HandlerError as exc:
        resp = cmd.make_response(exc.code, exc.remark)
    assert resp is not None
    return resp


@dataclasses.dataclass
class CheckRow:
    """One line of a handler's check → code → remark table: the broker's config, what exists before, the request,
    the expected reply. ``remark`` is a part of the reply's remark that must appear; None: the reply carries no
    remark at all (the success rows)."""

    id: str
    request: Callable[[], RemotingCommand]
    code: int
    remark: str | None
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    setup: list[Callable[[WiredBroker], None]] = dataclasses.field(default_factory=list)


async def run_row(tmp_path: Path, row: CheckRow, *, acl_home: Path | None = None) -> RemotingCommand:
    """``row``'s request dispatched on a fresh wired broker after its setup steps."""
    async with wired_broker(tmp_path, acl_home=acl_home, **row.config) as broker:
        for step in row.setup:
            step(broker)
        return await dispatch(broker, row.request())


def check_row(resp: RemotingCommand, row: CheckRow) -> None:
    """The reply has ``row``'s code and remark (both always checked)."""
    assert resp.code == row.code, (resp.code, resp.remark)
    if row.remark is None:
        assert not resp.remark, resp.remark
    else:
        assert row.remark and row.remark in (resp.remark or ""), resp.remark


def put_topic(name: str, perm: int = T.PERM_RW, queues: int = 4) -> Callable[[WiredBroker], None]:
    """A setup step: topic ``name`` exists with ``queues`` read and write queues."""

    def setup(b: WiredBroker) -> None:
        b.topics.put(TopicConfig.with_queues(name, queues, perm))

    return setup


def put_group(name: str, **fields: Any) -> Callable[[WiredBroker], None]:
    """A setup step: subscription group ``name`` exists with ``fields``."""

    def setup(b: WiredBroker) -> None:
        b.groups.put(SubscriptionGroupConfig(name, **fields))

    return setup
