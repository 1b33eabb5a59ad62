"""Orderly consumption's queue locks on the brokers (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ): the queues of a request are
grouped per broker, each broker asked once. A failed lock leaves those queues unlocked (the rebalance retries); a
failed unlock is ignored (the broker's lock expires)."""

from __future__ import annotations

import contextlib

from client._log import get_logger
from client.instance import ClientInstance
from client.message import MessageQueue

_log = get_logger("rocketq.client.push")


def _by_broker(mqs: list[MessageQueue]) -> list[tuple[str, list[MessageQueue]]]:
    by_broker: dict[str, list[MessageQueue]] = {}
    for mq in mqs:
        by_broker.setdefault(mq.broker_name, []).append(mq)
    return sorted(by_broker.items())


async def lock_queues(instance: ClientInstance, group: str, mqs: list[MessageQueue]) -> set[MessageQueue]:
    """The queues of ``mqs`` that ``group``'s client now holds the lock of."""
    locked: set[MessageQueue] = set()
    for broker, qs in _by_broker(mqs):
        try:
            addr = await instance.find_broker_addr(qs[0])
            locked |= await instance.api.lock_batch(addr, group, instance.client_id, qs, instance.request_timeout)
        except Exception as exc:
            _log.warning("queue lock failed", broker=broker, error=str(exc))
    return locked


async def unlock_queues(instance: ClientInstance, group: str, mqs: list[MessageQueue]) -> None:
    """Release the locks of ``mqs`` on the brokers that are known."""
    for broker, qs in _by_broker(mqs):
        addr = instance.broker_addr(broker)
        if addr is not None:
            with contextlib.suppress(Exception):
                await instance.api.unlock_batch(addr, group, instance.client_id, qs)
