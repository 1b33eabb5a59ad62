"""Disk-full chaos: the scenario of ``tests/integration/disk_full_support.py`` (a broker process on a fresh 64 MiB
tmpfs, 8 MiB segments, SYNC_FLUSH, 60 KB sends until full, 16 MiB freed, puts must resume, every acknowledged
message read back before and after a restart) run again and again. Needs root (it mounts the tmpfs).

    python bench/disk_full_chaos.py --runs 20 [--size-mb 64]

Prints one line per run and a summary ``runs: N deaths: D lost: L not resumed: R``; exits 1 on any death, loss or
run where puts did not resume.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.integration.disk_full_support import mount_tmpfs, one_run, unmount  # noqa: E402


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--size-mb", type=int, default=64)
    args = ap.parse_args()
    deaths = lost = stuck = 0
    for i in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="disk-full-") as d:
            work = Path(d)
            mnt = work / "mnt"
            if not mount_tmpfs(mnt, args.size_mb):
                print("cannot mount a tmpfs here (needs root)", file=sys.stderr)
                return 2
            try:
                out = await one_run(work, mnt)
            finally:
                unmount(mnt)
        deaths += out.died is not None
        lost += out.lost
        stuck += not out.resumed
        print(
            f"run {i:2d}: acked {out.acked:4d}  refused {out.refused:3d}  other {out.other_codes}  lost {out.lost}  "
            f"died {out.died}  resumed {out.resumed}",
            flush=True,
        )
    print(f"runs: {args.runs} deaths: {deaths} lost: {lost} not resumed: {stuck}")
    return 1 if deaths or lost or stuck else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
