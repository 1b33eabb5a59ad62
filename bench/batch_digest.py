"""MD5 digests of what the broker's batch path produces, to compare two checkouts byte for byte.

    .venv/bin/python bench/batch_digest.py --repo /tmp/base --repo .      # one line per checkout; they must match

Each checkout runs in a fresh process (``cwd`` = the checkout, compiled where it has its ``make compile`` build): a
broker's handlers over a store in a temporary directory (``tests/unit/broker/handler_support.py``) with a fixed
store clock, then ``--batches`` SEND_BATCH_MESSAGE requests drawn from one seed (1–120 messages of 1–3000 random
bytes, random flags, ``WAIT`` and a ``UNIQ_KEY`` each, a third with ``TAGS`` and two ``KEYS``; 4 queues). Printed:
the MD5 of the replies' header fields (msgId, queueId, queueOffset, …) and the MD5 of the commit-log and
consume-queue files after dispatch.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path


async def _digests(batches: int, seed: int) -> dict[str, str]:
    sys.path.insert(0, ".")  # the checkout this run measures
    from broker import topics as T
    from protocol.batch import encode_batch_texts
    from protocol.bodies import TopicConfig
    from protocol.codes import RequestCode
    from protocol.command import RemotingCommand
    from tests.integration.broker_wire import send_cmd
    from tests.unit.broker.handler_support import dispatch, wired_broker

    rnd = random.Random(seed)
    replies, files = hashlib.md5(), hashlib.md5()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        async with wired_broker(root, mappedFileSizeCommitLog=64 * 1024 * 1024) as b:
            b.store._appender._clock = lambda: 1_800_000_000.0  # fixed store timestamps
            b.topics.put(TopicConfig.with_queues("DigestT", 4, T.PERM_RW))
            ext = {**send_cmd("DigestT", b"", queue_id=0).ext_fields, "batch": "true", "properties": ""}
            ext["bornTimestamp"] = "1700000000000"
            for i in range(batches):
                items = []
                for j in range(rnd.randint(1, 120)):
                    props = f"WAIT\x01true\x02UNIQ_KEY\x01{rnd.getrandbits(128):032X}\x02"
                    if rnd.random() < 0.3:
                        props = f"TAGS\x01t{rnd.randint(0, 9)}\x02KEYS\x01k{j} s{rnd.randint(0, 5)}\x02" + props
                    items.append((rnd.randint(-5, 5), rnd.randbytes(rnd.randint(1, 3000)), props))
                cmd = RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, {**ext, "queueId": str(i % 4)}, b"")
                cmd.body = encode_batch_texts(items)
                reply = await dispatch(b, cmd)
                if reply.code != 0:
                    raise SystemExit(f"batch {i} refused: {reply.remark}")
                replies.update(repr(sorted(reply.ext_fields.items())).encode())
                await asyncio.sleep(0)
            b.store.dispatcher.drain()
            for sub in ("commitlog", "consumequeue"):
                for f in sorted(p for p in (root / sub).rglob("*") if p.is_file()):
                    files.update(str(f.relative_to(root)).encode())
                    files.update(f.read_bytes())
    return {"replies": replies.hexdigest(), "store": files.hexdigest()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", action="append", default=[], help="a checkout (repeatable; default: this one)")
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(asyncio.run(_digests(a.batches, a.seed))))
        return
    here = Path(__file__).resolve()
    seen = set()
    for repo in a.repo or [str(here.parents[1])]:
        out = subprocess.run(
            [sys.executable, str(here), "--child", "--batches", str(a.batches), "--seed", str(a.seed)],
            cwd=repo, capture_output=True, text=True, check=True,
        )  # fmt: skip
        d = json.loads(out.stdout.strip().splitlines()[-1])
        seen.add((d["replies"], d["store"]))
        print(f"{repo:<30} replies {d['replies']}  store {d['store']}")
    if len(seen) > 1:
        raise SystemExit("batch_digest: the checkouts differ")


if __name__ == "__main__":
    main()
