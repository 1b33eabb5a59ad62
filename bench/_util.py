"""Shared bench helpers: the anchors' folder, running an anchor script, free ports, a results table."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
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


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*header))
    print(fmt.format(*("-" * w for w in widths)))
    for r in rows:
        print(fmt.format(*r))
