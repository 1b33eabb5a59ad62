"""Pure queue allocation strategies for clustering consumers: ``(group, me, all_mqs, all_cids) -> my queues``.

Every strategy sorts its inputs first, so all consumers of a group compute the same split from the same lists
whatever order they learned them in, and each queue goes to exactly one consumer.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Sequence

from client.message import MessageQueue

Strategy = Callable[[str, str, Sequence[MessageQueue], Sequence[str]], list[MessageQueue]]


def _prep(me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> tuple[list[MessageQueue], list[str]] | None:
    if not me or not mqs or not cids:
        return None
    cid_list = sorted(set(cids))
    if me not in cid_list:
        return None
    return sorted(set(mqs)), cid_list


def allocate_averagely(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
    """RocketMQ's AllocateMessageQueueAveragely: contiguous blocks, the first ``len % n`` consumers get one more."""
    prep = _prep(me, mqs, cids)
    if prep is None:
        return []
    queues, clients = prep
    index = clients.index(me)
    n, m = len(clients), len(queues)
    mod = m % n
    if m <= n:
        size = 1
    elif mod > 0 and index < mod:
        size = m // n + 1
    else:
        size = m // n
    start = index * size if mod > 0 and index < mod else index * size + mod
    rng = min(size, m - start)
    return [queues[(start + i) % m] for i in range(max(rng, 0))]


def allocate_averagely_by_circle(
    group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]
) -> list[MessageQueue]:
    """Queue ``i`` goes to consumer ``i % n``."""
    prep = _prep(me, mqs, cids)
    if prep is None:
        return []
    queues, clients = prep
    index = clients.index(me)
    return [q for i, q in enumerate(queues) if i % len(clients) == index]


def _md5(s: str) -> int:
    return int.from_bytes(hashlib.md5(s.encode(), usedforsecurity=False).digest()[:8], "big")


def make_consistent_hash(virtual_nodes: int = 10) -> Strategy:
    """Consistent hashing over a ring of ``virtual_nodes`` points per consumer (fewer moves when members change)."""

    def allocate(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
        prep = _prep(me, mqs, cids)
        if prep is None:
            return []
        queues, clients = prep
        ring = sorted((_md5(f"{c}{i}"), c) for c in clients for i in range(virtual_nodes))
        keys = [k for k, _ in ring]
        out = []
        for q in queues:
            pos = bisect.bisect_left(keys, _md5(str(q))) % len(ring)
            if ring[pos][1] == me:
                out.append(q)
        return out

    return allocate


allocate_consistent_hash = make_consistent_hash()


def make_by_config(queues: Sequence[MessageQueue]) -> Strategy:
    """A fixed list of queues for this consumer, whatever the others do (AllocateMessageQueueByConfig)."""
    fixed = list(queues)

    def allocate(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
        return [q for q in fixed if q in set(mqs)]

    return allocate


def make_by_machine_room(rooms: set[str], separator: str = "@") -> Strategy:
    """Only queues on brokers named ``<room>@<broker>`` for the given rooms, shared averagely
    (AllocateMessageQueueByMachineRoom)."""

    def allocate(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
        mine = [q for q in mqs if q.broker_name.split(separator, 1)[0] in rooms]
        return allocate_averagely(group, me, mine, cids)

    return allocate


STRATEGIES: dict[str, Strategy] = {
    "AVG": allocate_averagely,
    "AVG_BY_CIRCLE": allocate_averagely_by_circle,
    "CONSISTENT_HASH": allocate_consistent_hash,
}
