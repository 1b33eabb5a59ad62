"""Summarise ``bench/stall_probe``'s files for one bench run: per process, the GC collections (count and worst pause
per generation) and loop wake-ups more than 1 / 2 / 5 ms late, counted inside the window of the shortest-lived
process (the paced producer: workload B itself), so start-up does not count.

    .venv/bin/python bench/stall_summary.py /tmp/stalls
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _name(d: dict[str, Any], producer: dict[str, Any]) -> str:
    if d is producer:
        return "producer"
    for daemon in ("broker", "namesrv"):
        if f"/{daemon}/__main__.py" in d["argv"] or f"-m {daemon}" in d["argv"]:
            return daemon
    return "consumer"


def main(out: str) -> None:
    ds = [json.loads(p.read_text()) for p in Path(out).glob("*.json")]
    if not ds:
        raise SystemExit(f"no probe files in {out}")
    producer = min(ds, key=lambda d: d["t1"] - d["t0"])
    a, b = producer["t0"], producer["t1"]
    print(f"window {b - a:.2f} s (the producer's life)")
    print("process    gc gen0/1/2   worst pause ms (gen0/1/2)   lag >1/>2/>5 ms  worst lag ms  full gc ms  frozen")
    for d in sorted(ds, key=lambda d: _name(d, producer)):
        gcs = [x for x in d["gc"] if a <= x[0] <= b]
        counts = [sum(1 for x in gcs if x[1] == g) for g in range(3)]
        worst = [max([x[2] for x in gcs if x[1] == g] or [0.0]) for g in range(3)]
        lags = [x[1] for x in d["lag"] if a <= x[0] <= b]
        over = [sum(1 for x in lags if x > t) for t in (1, 2, 5)]
        print(
            f"{_name(d, producer):9s}  {counts!s:12s}  {' / '.join(f'{w:.2f}' for w in worst):26s}  "
            f"{'/'.join(map(str, over)):15s}  {max(lags or [0.0]):12.2f}  {d['full_ms']:10.2f}  {d['frozen']}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
