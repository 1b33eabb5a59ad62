"""The chaos suite's checker: after a run it reads every queue of the topic back from the final master (raw pulls
from offset 0) and from every replica, and judges the run's record of acknowledged sends against them.

==================  =================================================================================================
figure              meaning (must hold)
==================  =================================================================================================
acked               acknowledged sends (SEND_OK), all clients
lost                acked keys absent from the final log (must be 0)
duplicates          extra copies of a key in the final log (a retried send whose first try was stored; allowed)
fenced              acks whose reported (queue, offset) holds another message in the final log: a write a stale
                    master accepted and that was later cut (must be 0)
order violations    per producer and queue, acked sends (one at a time) whose final offsets do not follow the send
                    order (must be 0)
divergent           replicas whose log of the topic differs from the final master's once caught up (must be 0)
unconsumed          acked keys our push consumer never received (must be 0: consumers skip nothing)
unconsumed C++      acked keys the official C++ client's push consumer (its own group) never received (must be 0)
redelivered         extra deliveries of a key to our / the C++ push consumer (at-least-once; allowed, counted)
offset regressions  per group (ours, C++), queues whose committed offset on the new master is below one committed
                    before the fault (must be 0: committed offsets survive the failover)
cut bytes           bytes of commit log the replicas dropped when they rejoined (what a deposed master had that the
                    new one never confirmed; from the brokers' "commit log cut" lines)
unavailable         per fault, the longest time without any ack from the fault until the end of the run (seconds):
                    from the failure to the first successful send on the new master when the master changed. Over
                    every client's acks — the probe (0.5 s send timeout) sees the first moment the cluster takes
                    writes; ``unavailable (3 s)``: the same over the main producer's acks alone (J's 3 s
                    sendMsgTimeout: a send to a silent old master waits it out before the next one can go)
==================  =================================================================================================
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from client.admin.admin_client import AdminClient
from protocol.codes import RequestCode, ResponseCode
from protocol.headers import PullMessageRequestHeader
from protocol.record_decode import decode_records
from tests.chaos.workload import QUEUES, TOPIC, Ack, Record

Log = dict[int, list[str]]  # queue id → keys by queue offset (the index is the offset)


async def read_log(admin: AdminClient, addr: str) -> Log:
    """Every queue of the topic on the broker at ``addr``, pulled from offset 0 until it has no more."""
    log: Log = {}
    for qid in range(QUEUES):
        keys: list[str] = []
        offset = 0
        while True:
            h = PullMessageRequestHeader("CG_chaos_readback", TOPIC, qid, offset, 64, 0x4, 0, 0, 0, "*")
            resp = await admin.call(
                addr,
                RequestCode.PULL_MESSAGE,
                h.to_ext_fields(),
                ok=(
                    ResponseCode.SUCCESS,
                    ResponseCode.PULL_NOT_FOUND,
                    ResponseCode.PULL_RETRY_IMMEDIATELY,
                    ResponseCode.PULL_OFFSET_MOVED,
                ),
                timeout=5.0,
            )
            if resp.code != ResponseCode.SUCCESS:
                break
            for m in decode_records(resp.body):
                assert m.queue_offset == len(keys), f"queue {qid}: offset {m.queue_offset} after {len(keys)}"
                keys.append(m.body.decode())
            offset = int(resp.ext_fields["nextBeginOffset"])
        log[qid] = keys
    return log


@dataclass
class Verdict:
    scenario: str
    acked: int = 0
    acked_cpp: int = 0
    failed_sends: int = 0
    lost: list[str] = field(default_factory=list)
    duplicates: int = 0
    fenced: list[str] = field(default_factory=list)
    order_violations: int = 0
    divergent: list[str] = field(default_factory=list)
    unconsumed: list[str] = field(default_factory=list)
    unconsumed_cpp: list[str] = field(default_factory=list)
    redelivered: int = 0
    redelivered_cpp: int = 0
    offset_regressions: list[str] = field(default_factory=list)
    unavailable: list[float] = field(default_factory=list)
    unavailable_main: list[float] = field(default_factory=list)
    cut_bytes: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.fenced
            or self.order_violations
            or self.divergent
            or self.unconsumed
            or self.unconsumed_cpp
            or self.offset_regressions
        )

    def problems(self) -> str:
        parts = [
            f"{name}: {vals[:5]}"
            for name, vals in (
                ("lost", self.lost),
                ("fenced", self.fenced),
                ("divergent", self.divergent),
                ("unconsumed", self.unconsumed),
                ("unconsumed by C++", self.unconsumed_cpp),
                ("offset regressions", self.offset_regressions),
            )
            if vals
        ]
        if self.order_violations:
            parts.append(f"order violations: {self.order_violations}")
        return "; ".join(parts)


def judge(
    scenario: str,
    record: Record,
    final: Log,
    replicas: dict[str, Log],
    committed_before: dict[str, dict[int, int]],
    committed_after: dict[str, dict[int, int]],
    faults: list[float],
) -> Verdict:
    v = Verdict(scenario)
    v.acked = len(record.acks)
    v.acked_cpp = sum(1 for a in record.acks if a.key.startswith("cpp-"))
    v.failed_sends = len(record.failures)
    where: dict[str, tuple[int, int]] = {}
    counts: Counter[str] = Counter()
    for qid, keys in final.items():
        for off, key in enumerate(keys):
            counts[key] += 1
            where.setdefault(key, (qid, off))
    v.duplicates = sum(n - 1 for n in counts.values() if n > 1)
    for a in record.acks:
        if a.key not in counts:
            v.lost.append(a.key)
        if a.queue_id >= 0:
            keys = final.get(a.queue_id, [])
            if a.queue_offset >= len(keys) or keys[a.queue_offset] != a.key:
                v.fenced.append(f"{a.key}@q{a.queue_id}:{a.queue_offset} by {a.acker}")
    last: dict[tuple[str, int], int] = {}
    for a in sorted((a for a in record.acks if a.queue_id >= 0), key=lambda a: a.sent):
        if a.key in where:
            qid, off = where[a.key]
            lane = (a.key.rsplit("-", 1)[0], qid)
            if off <= last.get(lane, -1):
                v.order_violations += 1
            last[lane] = max(off, last.get(lane, -1))
    for name, log in replicas.items():
        if log != final:
            v.divergent.append(name)
    v.unconsumed, v.redelivered = _consumer_verdict(record.acks, record.consumed)
    v.unconsumed_cpp, v.redelivered_cpp = _consumer_verdict(record.acks, record.consumed_cpp)
    for group, offsets in committed_before.items():
        for qid, before in offsets.items():
            after = committed_after.get(group, {}).get(qid, -1)
            if after < before:
                v.offset_regressions.append(f"{group} q{qid}: {before} -> {after}")
    for t in faults:
        window = _window(t, record.acks)
        if window is None:
            v.notes.append(f"no ack after the fault at {t:.1f}")
            continue
        v.unavailable.append(window)
        main = _window(t, [a for a in record.acks if a.key.startswith("py-")])
        if main is not None:
            v.unavailable_main.append(main)
    return v


def _window(fault: float, acks: list[Ack]) -> float | None:
    """The longest time without an ack from ``fault`` on (None: no ack after it)."""
    times = sorted(a.acked for a in acks if a.acked >= fault)
    if not times:
        return None
    return round(max(b - a for a, b in zip([fault, *times], times, strict=False)), 2)


def _consumer_verdict(acks: list[Ack], consumed: list[tuple[str, int, int]]) -> tuple[list[str], int]:
    """The acked keys a consumer never received, and how many deliveries were repeats."""
    got = Counter(k for k, _q, _o in consumed)
    return [a.key for a in acks if a.key not in got], sum(n - 1 for n in got.values() if n > 1)
