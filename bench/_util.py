"""Shared bench helpers: the anchors' folder, running an anchor script, free ports, a name server process, a results
table."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ANCHORS = REPO.parent / "shared" / "bench" / "anchors"


def run_anchor(script: str, *args: str, timeout: float = 300) -> list[dict[str, Any]]:
    """Run ``../shared/bench/anchors/<script>`` with our interpreter; returns its JSON lines (empty if it fails)."""
    path = ANCHORS / script
    if not path.exists():
        print(f"  (anchor {path} not found; skipped)")
        return []
    proc = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout, cwd=str(ANCHORS)
    )
    out = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    if proc.returncode != 0 and not out:
        print(f"  (anchor {script} {' '.join(args)} failed: {proc.stderr.strip().splitlines()[-1:]})")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, deadline: float) -> None:
    """Block until something listens on 127.0.0.1:``port``; ``RuntimeError`` once ``time.monotonic()`` passes
    ``deadline``."""
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on {port}") from None
            time.sleep(0.1)


def start_namesrv(tmp: Path, procs: list[subprocess.Popen[bytes]], deadline: float) -> str:
    """Start a name server process (its config, KV file and logs under ``tmp``), appended to ``procs`` so the
    caller stops it even if it never listens; returns its address once it listens."""
    port = free_port()
    (tmp / "namesrv.conf").write_text(f"listenPort={port}\nkvConfigPath={tmp}/kv.json\nlogDir={tmp}/logs\n")
    quiet = subprocess.DEVNULL
    procs.append(
        subprocess.Popen(
            [sys.executable, "-m", "namesrv", "-c", str(tmp / "namesrv.conf")],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=quiet,
            stderr=quiet,
        )
    )
    wait_port(port, deadline)
    return f"127.0.0.1:{port}"


def store_config(root: str, **kw: object) -> Any:
    """The store benches' ``StoreConfig`` (256 MiB commit-log segments, 300,000-unit queues, a 400,000-entry index)
    under ``root``, ``kw`` overriding; imported when called, so it is the ``StoreConfig`` of the checkout the bench
    put first on ``sys.path`` (store_io_bench's ``--repo``)."""
    from broker.store import StoreConfig

    fields: dict[str, object] = dict(
        store_path_root_dir=root,
        mapped_file_size_commit_log=256 * 1024 * 1024,
        mapped_file_size_consume_queue=300_000 * 20,
        max_hash_slot_num=50_000,
        max_index_num=400_000,
        message_index_enable=True,
    )
    fields.update(kw)
    return StoreConfig(**fields)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux ``/proc/PID/stat`` fields 14 and 15, read after
    the ``(comm)`` field, which may hold spaces)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*header))
    print(fmt.format(*("-" * w for w in widths)))
    for r in rows:
        print(fmt.format(*r))


def percentile(sorted_vals: list[int] | list[float], p: float) -> float | None:
    """Nearest-rank percentile (``p`` in [0, 100]) of an already sorted list: the smallest value with at least p %
    of the values at or below it."""
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, max(0, math.ceil(p / 100.0 * len(sorted_vals) - 1e-9) - 1))
    return float(sorted_vals[k])


def latency_summary(lat_ns: list[int]) -> dict[str, float | None]:
    """count, p50, p99, p99.9 and max of nanosecond latencies, in milliseconds."""
    s = sorted(lat_ns)

    def ms(v: float | None) -> float | None:
        return None if v is None else v / 1e6

    return {
        "count": float(len(s)),
        "p50_ms": ms(percentile(s, 50)),
        "p99_ms": ms(percentile(s, 99)),
        "p999_ms": ms(percentile(s, 99.9)),
        "max_ms": ms(float(s[-1]) if s else None),
    }


def median_of(values: list[float | None]) -> float | None:
    """The median of the values that were measured (``None`` = no figure); ``None`` when there are none."""
    got = sorted(v for v in values if v is not None)
    if not got:
        return None
    mid = len(got) // 2
    return got[mid] if len(got) % 2 else (got[mid - 1] + got[mid]) / 2


def ratio(ours: float | None, theirs: float | None) -> str:
    """``ours / theirs`` as a table cell: two decimals, ``—`` when either side has no figure."""
    if ours is None or theirs is None or theirs == 0:
        return "—"
    return f"{ours / theirs:.2f}"


def due(elapsed_s: float, rate: float, total: int) -> int:
    """How many messages a sender paced at ``rate`` msgs/s should have sent ``elapsed_s`` after it started
    (the first one at once), never more than ``total``."""
    return min(total, int(elapsed_s * rate) + 1)


def next_due_in(sent: int, rate: float, elapsed_s: float) -> float:
    """Seconds until message ``sent + 1`` (0-based index ``sent``) is due; <= 0 when it is already late."""
    return sent / rate - elapsed_s


def highest_rate(holds: Callable[[int], bool], ladder: list[int], bisect: int) -> int | None:
    """The highest rate at which ``holds(rate)``: up ``ladder`` to its first miss, then ``bisect`` halvings between
    the last rate held and that miss. None when the ladder's first rate already misses."""
    best: int | None = None
    miss: int | None = None
    for rate in ladder:
        if not holds(rate):
            miss = rate
            break
        best = rate
    if best is None or miss is None:
        return best
    for _ in range(bisect):
        mid = (best + miss) // 2
        if mid in (best, miss):
            break
        if holds(mid):
            best = mid
        else:
            miss = mid
    return best
