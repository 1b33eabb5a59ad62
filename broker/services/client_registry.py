"""ClientRegistry: which producers and consumers are connected, per group, learnt from HEART_BEAT.

It keeps, per consumer group, the channels (one per connection, each with the client id exactly as heartbeated),
the group's subscriptions (used by pulls without the SUBSCRIPTION flag), and the consume type/model. It pushes
NOTIFY_CONSUMER_IDS_CHANGED (oneway) to every consumer of a group when the membership or the subscriptions change:
a new consumer, an unregister, a closed connection, or an expired one. A scan task closes channels that sent no
heartbeat for ``channelExpiredTimeout`` (J ``ClientHousekeepingService``).

State is touched only from the event loop; there are no locks.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import structlog

from broker.sql92 import Selector
from broker.store.request import MessageFilter
from protocol.bodies import SubscriptionData
from protocol.codes import LanguageCode, RequestCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import NotifyConsumerIdsChangedRequestHeader
from protocol.remoting.handler import Channel
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.clients")


@dataclass(slots=True)
class ClientChannel:
    channel: Channel
    client_id: str
    language: LanguageCode
    version: int
    last_update: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class CompiledSubscription:
    """One subscribed topic with its expression, compiled once per heartbeat, not per pull: the tag strings and
    codes of a TAG expression, or the compiled ``selector`` of a SQL92 one (None when it did not compile: J's missing
    ConsumerFilterData), and the ``filter`` a read goes through (``broker.filter.build_subscription`` builds it). The broker's filtering form of the wire's ``protocol.bodies.SubscriptionData`` (a
    heartbeat's subscription), which ``to_wire`` gives back."""

    topic: str
    sub_string: str
    tags: frozenset[str] = frozenset()
    codes: frozenset[int] = frozenset()
    sub_version: int = 0
    expression_type: str = "TAG"
    selector: Selector | None = None
    filter: MessageFilter | None = field(default=None, compare=False)  # what the store reads through; None: all

    @property
    def is_sql(self) -> bool:
        return self.expression_type == "SQL92"

    @property
    def matches_all(self) -> bool:
        return not self.tags and not self.is_sql

    def to_wire(self) -> SubscriptionData:
        return SubscriptionData(
            topic=self.topic,
            sub_string=self.sub_string,
            tags_set=sorted(self.tags),
            code_set=sorted(self.codes),
            sub_version=self.sub_version,
            expression_type=self.expression_type,
        )


@dataclass(slots=True)
class ConsumerGroupInfo:
    group_name: str
    consume_type: str = "CONSUME_PASSIVELY"
    message_model: str = "CLUSTERING"
    consume_from_where: str = "CONSUME_FROM_LAST_OFFSET"
    subscriptions: dict[str, CompiledSubscription] = field(default_factory=dict)
    channels: dict[Channel, ClientChannel] = field(default_factory=dict)
    last_update: float = field(default_factory=time.monotonic)

    def client_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for info in self.channels.values():
            seen.setdefault(info.client_id, None)
        return list(seen)

    def find_channel(self, client_id: str) -> ClientChannel | None:
        for info in self.channels.values():
            if info.client_id == client_id and not info.channel.is_closed:
                return info
        return None


def _notify_command(group: str) -> RemotingCommand:
    ext = NotifyConsumerIdsChangedRequestHeader(group).to_ext_fields()
    return RemotingCommand.request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, ext, oneway=True)


class ClientRegistry:
    def __init__(self, channel_expired_ms: int, notify_enabled: Callable[[str], bool] = lambda _g: True) -> None:
        self._producers: dict[str, dict[Channel, ClientChannel]] = {}
        self._consumers: dict[str, ConsumerGroupInfo] = {}
        self._hooked: set[Channel] = set()
        self._expired_s = channel_expired_ms / 1000
        self._notify_enabled = notify_enabled
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._scan_loop(), name="client-expiry-scan")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)

    async def _scan_loop(self) -> None:
        period = min(10.0, max(self._expired_s / 4, 0.05))
        while True:
            await asyncio.sleep(period)
            self.scan_expired()

    def scan_expired(self, now: float | None = None) -> int:
        """Close and drop channels silent for longer than ``channelExpiredTimeout``; returns how many."""
        now = time.monotonic() if now is None else now
        stale: set[Channel] = set()
        for chans in self._producers.values():
            stale.update(c for c, i in chans.items() if now - i.last_update > self._expired_s)
        for info in self._consumers.values():
            stale.update(c for c, i in info.channels.items() if now - i.last_update > self._expired_s)
        for ch in stale:
            _log.warning("client channel expired, closing", peer=ch.peer)
            self.on_channel_closed(ch)
            with contextlib.suppress(Exception):
                ch.close()
        return len(stale)

    def _hook(self, channel: Channel) -> None:
        if channel not in self._hooked:
            self._hooked.add(channel)
            channel.add_close_callback(self.on_channel_closed)

    # -- producers ---------------------------------------------------------------------------------------------

    def register_producer(self, group: str, info: ClientChannel) -> None:
        chans = self._producers.setdefault(group, {})
        old = chans.get(info.channel)
        if old is None:
            chans[info.channel] = info
            self._hook(info.channel)
        else:
            old.last_update = info.last_update
            old.client_id = info.client_id

    def unregister_producer(self, group: str, channel: Channel) -> None:
        chans = self._producers.get(group)
        if chans is not None and chans.pop(channel, None) is not None and not chans:
            del self._producers[group]

    def find_producer_channel(self, client_id: str) -> ClientChannel | None:
        """The open connection of a producer with ``client_id``, whatever its group (J ``ProducerManager.findChannel``:
        where request-reply answers are pushed)."""
        for chans in self._producers.values():
            for info in chans.values():
                if info.client_id == client_id and not info.channel.is_closed:
                    return info
        return None

    def producer_groups(self) -> dict[str, list[ClientChannel]]:
        return {g: list(c.values()) for g, c in self._producers.items()}

    # -- consumers ---------------------------------------------------------------------------------------------

    def register_consumer(
        self,
        group: str,
        info: ClientChannel,
        consume_type: str,
        message_model: str,
        consume_from_where: str,
        subscriptions: Iterable[CompiledSubscription],
        *,
        notify: bool,
    ) -> bool:
        """J ``ConsumerManager.registerConsumer``: True (and a notification) if a channel or a topic is new."""
        grp = self._consumers.get(group)
        if grp is None:
            grp = self._consumers[group] = ConsumerGroupInfo(group)
        grp.consume_type, grp.message_model, grp.consume_from_where = consume_type, message_model, consume_from_where
        grp.last_update = time.monotonic()
        old = grp.channels.get(info.channel)
        new_channel = old is None
        if old is None:
            grp.channels[info.channel] = info
            self._hook(info.channel)
        else:
            old.last_update = info.last_update
            if old.client_id != info.client_id:
                old.client_id = info.client_id
                new_channel = True
        new_subs = {s.topic: s for s in subscriptions}
        subs_changed = new_subs.keys() != grp.subscriptions.keys()
        for topic, sub in new_subs.items():
            cur = grp.subscriptions.get(topic)
            if cur is None or cur.sub_string != sub.sub_string or sub.sub_version > cur.sub_version:
                grp.subscriptions[topic] = sub
        for topic in [t for t in grp.subscriptions if t not in new_subs]:
            del grp.subscriptions[topic]
        changed = new_channel or subs_changed
        if changed:
            _log.info("consumer group changed", group=group, client_id=info.client_id, clients=len(grp.channels))
            if notify:
                self._notify(grp)
        return changed

    def unregister_consumer(self, group: str, channel: Channel, *, notify: bool) -> None:
        grp = self._consumers.get(group)
        if grp is None or grp.channels.pop(channel, None) is None:
            return
        _log.info("consumer unregistered", group=group, clients=len(grp.channels))
        if not grp.channels:
            del self._consumers[group]
        elif notify:
            self._notify(grp)

    def on_channel_closed(self, channel: Channel) -> None:
        """Drop ``channel`` from every group; notify the rest of each consumer group it was in."""
        self._hooked.discard(channel)
        for group in list(self._producers):
            self.unregister_producer(group, channel)
        for group, grp in list(self._consumers.items()):
            if grp.channels.pop(channel, None) is None:
                continue
            _log.info("consumer channel closed", group=group, peer=channel.peer, clients=len(grp.channels))
            if not grp.channels:
                del self._consumers[group]
            elif self._notify_enabled(group):
                self._notify(grp)

    def consumer_group(self, group: str) -> ConsumerGroupInfo | None:
        return self._consumers.get(group)

    def consumer_groups(self) -> dict[str, ConsumerGroupInfo]:
        return dict(self._consumers)

    def client_ids(self, group: str) -> list[str]:
        grp = self._consumers.get(group)
        return grp.client_ids() if grp is not None else []

    def find_consumer_channel(self, group: str, client_id: str) -> ClientChannel | None:
        grp = self._consumers.get(group)
        return grp.find_channel(client_id) if grp is not None else None

    def _notify(self, grp: ConsumerGroupInfo) -> None:
        for ch in list(grp.channels):
            if ch.is_closed:
                continue
            try:
                ch.invoke_oneway(_notify_command(grp.group_name))
            except RemotingError as exc:
                _log.info("notify consumer ids changed failed", group=grp.group_name, peer=ch.peer, error=str(exc))
