"""POP consumption state, pure (no IO, no clock, no asyncio): what RocketMQ 5's broker keeps in its pop checkpoints
and revive topic, held here as one table the gRPC endpoint's ``PopService`` drives and ``pop_store`` persists.

It owns, per consumer group and topic:

* the **pop offset** of each queue: the next queue offset a receive reads from the store (a new group starts where
  RocketMQ 5's ``getInitOffset`` does, see ``PopService._init_offset``, unless it already has a consumer offset);
* the **in-flight** messages: popped, not acked, invisible until their deadline. Each has a receipt handle; a
  ChangeInvisibleDuration replaces the handle (a new generation), so only the newest handle acks;
* **redelivery**: an in-flight message whose deadline has passed is *due*; the next receive hands it out again with
  ``attempt + 1`` (instead of RocketMQ's re-put to ``%RETRY%<group>+<topic>``); at the group's max attempts it goes to
  ``%DLQ%<group>`` instead (the service does the put);
* **auto-renew** (a push consumer's receive): while its client is connected, the deadline is pushed forward shortly
  before it passes (up to a cap), and the handle stays valid; a nack (ChangeInvisibleDuration) ends the renewal;
* **FIFO**: for a FIFO group, a queue with any message in flight is locked: no new message is popped from it until
  every earlier one is acked or dead-lettered, and due ones are redelivered in queue-offset order.

Receipt handle (opaque to clients, ASCII, ``_`` separated):

====== ============================================================================================
field  meaning
====== ============================================================================================
v      format version, ``1``
id     the in-flight entry's id (unique per broker, persisted with the state)
gen    generation; bumped by every redelivery and ChangeInvisibleDuration (older handles are stale)
dl     the invisibility deadline (epoch ms) the handle was issued with; past it the handle is expired
====== ============================================================================================
e.g. ``1_42_0_1732390000000``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

GroupTopic = tuple[str, str]


class HandleStatus(Enum):
    OK = 0
    INVALID = 1  # not a handle of ours, or of another group/topic
    EXPIRED = 2  # its deadline passed, or it was superseded (redelivered / changed)


@dataclass(slots=True)
class InFlight:
    id: int
    gen: int
    group: str
    topic: str
    queue_id: int
    queue_offset: int
    phys: int  # commit-log offset of the stored message
    size: int
    message_id: str
    attempt: int  # delivery attempt of the current delivery, 1 = first
    deadline_ms: int
    fifo: bool = False
    # auto-renew (push consumers' receives): the client whose invisibility is extended while it is connected, and
    # when the message was first handed to it; "" = the deadline is fixed
    renew_client: str = ""
    renew_since_ms: int = 0

    @property
    def handle(self) -> str:
        return f"1_{self.id}_{self.gen}_{self.deadline_ms}"


def parse_handle(handle: str) -> tuple[int, int, int] | None:
    """``(id, gen, deadline_ms)`` of a handle, or None when it is not one of ours."""
    parts = handle.split("_")
    if len(parts) != 4 or parts[0] != "1" or not all(p.isdigit() for p in parts[1:]):
        return None
    return int(parts[1]), int(parts[2]), int(parts[3])


class PopState:
    def __init__(self) -> None:
        self.offsets: dict[tuple[str, str, int], int] = {}
        self.inflight: dict[GroupTopic, dict[int, InFlight]] = {}
        self.next_id = 1

    # -- pop offsets ---------------------------------------------------------------------------------------------

    def offset(self, group: str, topic: str, queue_id: int) -> int | None:
        return self.offsets.get((group, topic, queue_id))

    def set_offset(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        self.offsets[(group, topic, queue_id)] = offset

    # -- in flight ------------------------------------------------------------------------------------------------

    def add(
        self,
        group: str,
        topic: str,
        queue_id: int,
        queue_offset: int,
        phys: int,
        size: int,
        message_id: str,
        *,
        now_ms: int,
        invisible_ms: int,
        fifo: bool = False,
        attempt: int = 1,
        renew_client: str = "",
    ) -> InFlight:
        e = InFlight(
            self.next_id,
            0,
            group,
            topic,
            queue_id,
            queue_offset,
            phys,
            size,
            message_id,
            attempt,
            now_ms + invisible_ms,
            fifo,
            renew_client,
            now_ms,
        )
        self.next_id += 1
        self.inflight.setdefault((group, topic), {})[e.id] = e
        return e

    def find(self, group: str, topic: str, handle: str, now_ms: int) -> tuple[HandleStatus, InFlight | None]:
        parsed = parse_handle(handle)
        if parsed is None:
            return HandleStatus.INVALID, None
        hid, gen, deadline = parsed
        e = self.inflight.get((group, topic), {}).get(hid)
        if e is None:
            # acked already, or never ours: a well-formed handle of a finished message reads as expired
            return (HandleStatus.EXPIRED if hid < self.next_id else HandleStatus.INVALID), None
        # an auto-renewed message keeps its handle while its deadline moves
        if e.gen != gen or (deadline != e.deadline_ms and not e.renew_client) or e.deadline_ms <= now_ms:
            return HandleStatus.EXPIRED, e
        return HandleStatus.OK, e

    def ack(self, group: str, topic: str, handle: str, now_ms: int) -> tuple[HandleStatus, InFlight | None]:
        status, e = self.find(group, topic, handle, now_ms)
        if status is HandleStatus.OK and e is not None:
            self.remove(e)
        return status, e

    def change_invisible(
        self, group: str, topic: str, handle: str, now_ms: int, invisible_ms: int
    ) -> tuple[HandleStatus, InFlight | None]:
        status, e = self.find(group, topic, handle, now_ms)
        if status is HandleStatus.OK and e is not None:
            e.gen += 1
            e.deadline_ms = now_ms + invisible_ms
            e.renew_client = ""  # a nack's backoff is kept, not renewed away
        return status, e

    def remove(self, e: InFlight) -> None:
        table = self.inflight.get((e.group, e.topic))
        if table is not None and table.pop(e.id, None) is not None and not table:
            del self.inflight[(e.group, e.topic)]

    def due(self, group: str, topic: str, now_ms: int) -> list[InFlight]:
        """In-flight messages of the group whose invisibility has ended, in (queue, offset) order."""
        table = self.inflight.get((group, topic), {})
        return sorted(
            (e for e in table.values() if e.deadline_ms <= now_ms), key=lambda e: (e.queue_id, e.queue_offset)
        )

    def redeliver(self, e: InFlight, now_ms: int, invisible_ms: int, renew_client: str = "") -> None:
        e.gen += 1
        e.attempt += 1
        e.deadline_ms = now_ms + invisible_ms
        e.renew_client, e.renew_since_ms = renew_client, now_ms

    def renew(self, now_ms: int, ahead_ms: int, invisible_ms: int, max_ms: int, alive: Callable[[str], bool]) -> int:
        """Extend auto-renewed messages whose deadline is within ``ahead_ms`` while their client is alive (for at
        most ``max_ms`` since delivery); a gone client's messages keep their deadline. Returns how many changed."""
        n = 0
        for table in self.inflight.values():
            for e in table.values():
                if not e.renew_client or e.deadline_ms - now_ms > ahead_ms or e.deadline_ms <= now_ms:
                    continue
                if alive(e.renew_client) and now_ms - e.renew_since_ms < max_ms:
                    e.deadline_ms = now_ms + invisible_ms
                else:
                    e.renew_client = ""
                n += 1
        return n

    def locked_queues(self, group: str, topic: str) -> set[int]:
        """FIFO: queues with a message in flight (nothing new is popped from them)."""
        return {e.queue_id for e in self.inflight.get((group, topic), {}).values() if e.fifo}

    def next_deadline(self, group: str, topic: str) -> int | None:
        table = self.inflight.get((group, topic))
        return min((e.deadline_ms for e in table.values()), default=None) if table else None

    def count(self, group: str, topic: str | None = None) -> int:
        if topic is not None:
            return len(self.inflight.get((group, topic), {}))
        return sum(len(t) for (g, _t), t in self.inflight.items() if g == group)

    # -- JSON (pop_store writes it) -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        offsets: dict[str, dict[str, int]] = {}
        for (g, t, q), off in self.offsets.items():
            offsets.setdefault(f"{t}@{g}", {})[str(q)] = off
        return {
            "nextId": self.next_id,
            "offsetTable": offsets,
            "inFlight": [asdict(e) for table in self.inflight.values() for e in table.values()],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PopState:
        st = cls()
        st.next_id = int(d.get("nextId", 1))
        for key, queues in (d.get("offsetTable") or {}).items():
            topic, _, group = str(key).rpartition("@")
            for q, off in queues.items():
                st.offsets[(group, topic, int(q))] = int(off)
        entries: Iterable[dict[str, Any]] = d.get("inFlight") or []
        for raw in entries:
            e = InFlight(**raw)
            st.inflight.setdefault((e.group, e.topic), {})[e.id] = e
            st.next_id = max(st.next_id, e.id + 1)
        return st
