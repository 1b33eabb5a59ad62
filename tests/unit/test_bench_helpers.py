"""The latency bench's arithmetic: percentiles, medians, ratios, rate pacing, the highest-rate search and the
timestamped message body, and the CPU-time reading. No timings: only the figures computed from given inputs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench._systems import WARM, body, sent_ns
from bench._util import cpu_seconds, due, highest_rate, latency_summary, median_of, next_due_in, percentile, ratio


def test_percentile_is_nearest_rank() -> None:
    vals = list(range(1, 101))  # 1..100
    assert percentile(vals, 50) == 50
    assert percentile(vals, 99) == 99
    assert percentile(vals, 99.9) == 100
    assert percentile(vals, 100) == 100
    assert percentile(vals, 0) == 1
    assert percentile([7], 99.9) == 7
    assert percentile([], 50) is None


def test_latency_summary_in_milliseconds() -> None:
    lat_ns = [1_000_000 * k for k in range(1000, 0, -1)]  # 1..1000 ms, unsorted
    s = latency_summary(lat_ns)
    assert s["count"] == 1000
    assert s["p50_ms"] == 500
    assert s["p99_ms"] == 990
    assert s["p999_ms"] == 999
    assert s["max_ms"] == 1000
    assert latency_summary([])["p99_ms"] is None


def test_median_skips_runs_without_a_figure() -> None:
    assert median_of([3.0, 1.0, 2.0]) == 2.0
    assert median_of([4.0, 1.0, None, 2.0, 3.0]) == 2.5
    assert median_of([None, None]) is None
    assert median_of([]) is None


def test_ratio_cell() -> None:
    assert ratio(3.0, 4.0) == "0.75"
    assert ratio(None, 4.0) == "—"
    assert ratio(3.0, None) == "—"
    assert ratio(3.0, 0.0) == "—"


def test_pacing_sends_the_first_at_once_and_keeps_the_rate() -> None:
    assert due(0.0, 1000, 5000) == 1
    assert due(0.0099, 1000, 5000) == 10
    assert due(0.010, 1000, 5000) == 11
    assert due(99.0, 1000, 5000) == 5000  # never more than the total
    assert next_due_in(10, 1000, 0.0095) == pytest.approx(0.0005)
    assert next_due_in(10, 1000, 0.012) < 0  # late: send now


def test_pacing_schedule_sends_exactly_rate_times_seconds() -> None:
    """A sender waking every 0.7 ms (late or early) sends what is due: at each instant no more than rate * t + 1."""
    rate, total, sent, t, step = 5000, 5000, 0, 0.0, 0.0007
    last_sent_at = -1.0
    while sent < total:
        k = due(t, rate, total) - sent
        assert k >= 0
        sent += k
        assert sent <= int(t * rate) + 1
        last_sent_at = t
        t += step
    assert sent == total
    last_due = (total - 1) / rate  # the first goes at 0, the last at (total - 1) / rate
    assert last_due - 1e-9 <= last_sent_at < last_due + step


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (500, None),  # the ladder's first rate misses
        (1000, 1000),  # 2000 misses, and so do the halvings 1500 and 1250
        (7000, 6250),  # holds 5000, misses 10000: 7500 misses, 6250 holds
        (10**9, 80000),  # holds the whole ladder
    ],
)
def test_highest_rate_climbs_the_ladder_then_bisects(limit: int, expected: int | None) -> None:
    probed: list[int] = []

    def holds(rate: int) -> bool:
        probed.append(rate)
        return rate <= limit

    ladder = [1000, 2000, 5000, 10000, 20000, 40000, 80000]
    assert highest_rate(holds, ladder, bisect=2) == expected
    assert len(probed) == len(set(probed))  # no rate measured twice
    if limit == 7000:
        assert probed == [1000, 2000, 5000, 10000, 7500, 6250]


def test_body_carries_its_send_time_and_size() -> None:
    b = body(1024, 123_456_789_012)
    assert len(b) == 1024
    assert sent_ns(b) == 123_456_789_012
    assert sent_ns(WARM) == 0


async def test_floor_relay_acks_every_send_and_forwards_to_the_subscriber() -> None:
    """The floor (bench/_floor.py): sends are acked in order, messages sent before anyone subscribed are kept for
    the first subscriber, later ones are forwarded, and a subscribe is acked like a message."""
    import asyncio

    from bench._floor import FloorClient, Relay, RelayConnection

    loop = asyncio.get_running_loop()
    relay = Relay()
    server = await loop.create_server(lambda: RelayConnection(relay), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, producer = await loop.create_connection(FloorClient, "127.0.0.1", port)
    _, consumer = await loop.create_connection(FloorClient, "127.0.0.1", port)
    got: list[bytes] = []
    enough = asyncio.Event()

    def on_bodies(bodies: list[bytes]) -> None:
        got.extend(bodies)
        if len(got) == 4:
            enough.set()

    await producer.request(b"early")
    assert relay.backlog and not relay.subscribers
    consumer.on_bodies = on_bodies
    await consumer.request(b"")
    await asyncio.gather(*producer.request_many([b"a", b"bb"]))
    await producer.request(b"ccc")
    await asyncio.wait_for(enough.wait(), 10)
    assert got == [b"early", b"a", b"bb", b"ccc"]
    assert not producer.waiting and not consumer.waiting
    producer.transport.close()
    consumer.transport.close()
    server.close()
    await server.wait_closed()


def test_cpu_seconds_reads_what_a_process_used() -> None:
    """``cpu_seconds`` reads user + system time from /proc: a child that burned 0.3 s of CPU (by its own clock) shows
    at least that, less the clock tick's rounding; its own reading is checked, not a duration."""
    burn = "import time\nwhile time.process_time() < 0.3: pass\nprint(time.process_time(), flush=True)\ninput()"
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        used = float(child.stdout.readline())
        seen = cpu_seconds(child.pid)
        assert used - 0.02 <= seen <= used + 0.5  # ticks are 10 ms; the interpreter's start-up counts too
        assert cpu_seconds(child.pid) == seen  # idle in input(): the reading holds still
    finally:
        child.communicate("\n")
