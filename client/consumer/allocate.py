"""Pure queue allocation strategies for clustering consumers: ``(group, me, all_mqs, all_cids) -> my queues``.

Every consumer of a group runs the strategy on the same two lists, so each must give the same split whatever order
it learned them in: the inputs are de-duplicated and sorted first (J's RebalanceImpl sorts before calling), and the
results match J's classes queue for queue, so our consumers can share a group with Java or C++ ones:

| function                         | J class                                 | split                                    |
|----------------------------------|-----------------------------------------|------------------------------------------|
| ``allocate_averagely``           | AllocateMessageQueueAveragely           | contiguous blocks, first ``m % n`` +1    |
| ``allocate_averagely_by_circle`` | AllocateMessageQueueAveragelyByCircle   | queue ``i`` → consumer ``i % n``         |
| ``make_consistent_hash(v)``      | AllocateMessageQueueConsistentHash      | MD5 ring, ``v`` virtual nodes per client |
| ``make_by_config(queues)``       | AllocateMessageQueueByConfig            | a fixed list                             |
| ``make_by_machine_room(rooms)``  | AllocateMessageQueueByMachineRoom       | brokers ``room@name`` of given rooms     |

A consumer that is not in the list gets nothing.
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
    """Contiguous blocks; the first ``len(mqs) % len(cids)`` consumers get one queue more."""
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


def java_md5_hash(key: str) -> int:
    """J ``ConsistentHashRouter.MD5Hash``: the first 4 digest bytes, big-endian, as an unsigned 32-bit number."""
    return int.from_bytes(hashlib.md5(key.encode(), usedforsecurity=False).digest()[:4], "big")


def make_consistent_hash(virtual_nodes: int = 10) -> Strategy:
    """Consistent hashing: ``virtual_nodes`` ring points per client id (``"<cid>-<i>"``), each queue
    (``str(mq)``, J's ``MessageQueue.toString()``) to the first point at or after its hash. Fewer queues move when
    members come and go than with the averaging strategies."""
    if virtual_nodes < 1:
        raise ValueError("virtual_nodes must be at least 1")

    def allocate(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
        prep = _prep(me, mqs, cids)
        if prep is None:
            return []
        queues, clients = prep
        ring: dict[int, str] = {}  # a TreeMap in J: a later node with the same hash replaces the earlier one
        for c in clients:
            for i in range(virtual_nodes):
                ring[java_md5_hash(f"{c}-{i}")] = c
        keys = sorted(ring)
        out = []
        for q in queues:
            pos = bisect.bisect_left(keys, java_md5_hash(str(q)))
            if ring[keys[pos % len(keys)]] == me:
                out.append(q)
        return out

    return allocate


allocate_consistent_hash = make_consistent_hash()


def make_by_config(queues: Sequence[MessageQueue]) -> Strategy:
    """Always the same queues for this consumer, whatever the others do (those that exist now)."""
    fixed = list(queues)

    def allocate(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
        present = set(mqs)
        return [q for q in fixed if q in present]

    return allocate


def make_by_machine_room(rooms: set[str] | frozenset[str], separator: str = "@") -> Strategy:
    """Queues of brokers named ``<room>@<broker>`` for the given rooms, shared as J shares them: ``len // n`` each
    in blocks, and the remainder one each to the first consumers."""
    wanted = frozenset(rooms)

    def allocate(group: str, me: str, mqs: Sequence[MessageQueue], cids: Sequence[str]) -> list[MessageQueue]:
        prep = _prep(me, mqs, cids)
        if prep is None:
            return []
        queues, clients = prep
        mine = [q for q in queues if q.broker_name.split(separator, 1)[0] in wanted]
        index, n = clients.index(me), len(clients)
        per, rem = divmod(len(mine), n)
        out = mine[index * per : index * per + per]
        if rem > index:
            out.append(mine[index + per * n])
        return out

    return allocate


STRATEGIES: dict[str, Strategy] = {
    "AVG": allocate_averagely,
    "AVG_BY_CIRCLE": allocate_averagely_by_circle,
    "CONSISTENT_HASH": allocate_consistent_hash,
}
