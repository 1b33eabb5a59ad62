"""SlaveSynchronize: a slave copies its master's metadata — topic config, consumer offsets, delay-level offsets and
subscription groups — every 10 s (first after 3 s), with the admin codes J's slave uses, and persists each table.

=====  ====================================  ===========================================================
order  request (code, no header)             what the slave does with the body
=====  ====================================  ===========================================================
1      GET_ALL_TOPIC_CONFIG (21)             replace the topic table when the dataVersion differs
2      GET_ALL_CONSUMER_OFFSET (43)          the master's ``topic@group`` entries overwrite ours
3      GET_ALL_DELAY_OFFSET (45)             replace the delay-level offsets
4      GET_ALL_SUBSCRIPTIONGROUP_CONFIG      replace the group table when the dataVersion differs
       (201)
=====  ====================================  ===========================================================

Skipped while the master's remoting address is unknown or is this broker's own, and while this slave is not
replicating from it (a master that is still catching up from this slave has not got its tables back yet). Errors are
logged; the slave keeps its last copy.

The other way round (``take_back``, ours): a master that had to copy its log back from a slave first fetches the
same four tables from that slave and merges them in — topics and groups it lacks, the larger of each consumer and
delay offset — so a master restarted on an empty disk comes back with its topics and its consumers' positions. (J sends 21 to the master's VIP port, listenPort − 2; this broker has no VIP port, so all four go to
the master's address.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from protocol.bodies import BodyDecodeError, loads_lenient
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.remoting.client import RemotingClient
from runtime.tasks import stop_tasks

_log = logging.getLogger("rocketq.broker.ha.sync")

FIRST_DELAY_S = 3.0
PERIOD_S = 10.0
TIMEOUT_S = 3.0


class SlaveSynchronize:
    def __init__(
        self,
        client: RemotingClient,
        master_addr: Callable[[], str | None],
        own_addr: Callable[[], str],
        topics: TopicConfigTable,
        offsets: ConsumerOffsetTable,
        schedule: ScheduleService,
        groups: SubscriptionGroupTable,
        replicating: Callable[[], bool] = lambda: True,
    ) -> None:
        self._replicating = replicating
        self._client = client
        self._master_addr = master_addr
        self._own_addr = own_addr
        self._topics = topics
        self._offsets = offsets
        self._schedule = schedule
        self._groups = groups
        self._task: asyncio.Task[None] | None = None
        self.syncs = 0  # completed syncAll rounds

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="slave-synchronize")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)

    async def _run(self) -> None:
        await asyncio.sleep(FIRST_DELAY_S)
        while True:
            await self.sync_all()
            await asyncio.sleep(PERIOD_S)

    async def _get(self, addr: str, code: RequestCode) -> dict[str, object] | None:
        try:
            resp = await self._client.invoke(addr, RemotingCommand.request(code), TIMEOUT_S)
        except RemotingError as exc:
            _log.warning("slave sync %s from %s failed: %s", code.name, addr, exc)
            return None
        if resp.code != ResponseCode.SUCCESS or not resp.body:
            _log.warning("slave sync %s from %s refused: %s %s", code.name, addr, resp.code, resp.remark)
            return None
        try:
            doc = loads_lenient(resp.body)
        except BodyDecodeError as exc:
            _log.warning("slave sync %s from %s: bad body: %s", code.name, addr, exc)
            return None
        return doc if isinstance(doc, dict) else None

    async def sync_all(self) -> bool:
        """One round, in J's order; returns whether every table was fetched."""
        addr = self._master_addr()
        if not addr or addr == self._own_addr() or not self._replicating():
            return False
        ok = True
        for code, copy in (
            (RequestCode.GET_ALL_TOPIC_CONFIG, self._copy_topics),
            (RequestCode.GET_ALL_CONSUMER_OFFSET, self._copy_offsets),
            (RequestCode.GET_ALL_DELAY_OFFSET, self._copy_delay_offsets),
            (RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, self._copy_groups),
        ):
            doc = await self._get(addr, code)
            if doc is None:
                ok = False
            else:
                copy(doc, addr)
        if ok:
            self.syncs += 1
        return ok

    def _copy_topics(self, doc: dict[str, object], addr: str) -> None:
        if self._topics.replace_from_master(doc):
            _log.info("topic config copied from master %s", addr)

    def _copy_offsets(self, doc: dict[str, object], addr: str) -> None:
        table = doc.get("offsetTable")
        if isinstance(table, dict):
            self._offsets.put_all(
                {str(k): {int(q): int(o) for q, o in v.items()} for k, v in table.items() if isinstance(v, dict)}
            )

    def _copy_delay_offsets(self, doc: dict[str, object], addr: str) -> None:
        table = doc.get("offsetTable")
        if isinstance(table, dict):
            self._schedule.replace_offsets({int(k): int(v) for k, v in table.items()})

    def _copy_groups(self, doc: dict[str, object], addr: str) -> None:
        if self._groups.replace_from_master(doc):
            _log.info("subscription groups copied from master %s", addr)

    async def take_back(self, addr: str) -> bool:
        """Merge a slave's tables into this master's (see the module docstring); returns whether all four came."""
        docs = [
            await self._get(addr, code)
            for code in (
                RequestCode.GET_ALL_TOPIC_CONFIG,
                RequestCode.GET_ALL_CONSUMER_OFFSET,
                RequestCode.GET_ALL_DELAY_OFFSET,
                RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
            )
        ]
        topics, offsets, delay, groups = docs
        if topics is not None:
            n = self._topics.merge_missing(topics)
            _log.warning("took back %d topic(s) from slave %s", n, addr)
        if offsets is not None and isinstance(offsets.get("offsetTable"), dict):
            table = offsets["offsetTable"]
            assert isinstance(table, dict)
            self._offsets.merge_max(
                {str(k): {int(q): int(o) for q, o in v.items()} for k, v in table.items() if isinstance(v, dict)}
            )
        if delay is not None and isinstance(delay.get("offsetTable"), dict):
            dt = delay["offsetTable"]
            assert isinstance(dt, dict)
            self._schedule.merge_max({int(k): int(v) for k, v in dt.items()})
        if groups is not None:
            self._groups.merge_missing(groups)
        return all(d is not None for d in docs)
