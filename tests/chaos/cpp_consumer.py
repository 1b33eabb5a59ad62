"""The official C++ client (PyPI ``rocketmq`` 0.4.4) as a push consumer for the chaos suite, in its own process
(librocketmq is not fork-safe and can crash its host).

    python tests/chaos/cpp_consumer.py NAMESRV TOPIC GROUP

Subscribes ``GROUP`` (clustering, the wrapper's concurrent listener) to ``TOPIC`` and consumes until stdin closes;
prints ``{"event":"started"}`` once started, then one JSON line per message it is given:
``{"event":"consumed","key","queue","offset"}`` (``key`` is the body, as the producers write it). The wrapper acks
a message when the callback returns; the client commits the consumed offsets to the broker on its own schedule.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any


def main() -> int:
    from rocketmq.client import PushConsumer

    ns, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
    out = threading.Lock()

    def emit(ev: dict[str, Any]) -> None:
        line = json.dumps(ev)
        with out:  # the client calls back from its own consume threads
            print(line, flush=True)

    def on_message(msg: Any) -> None:
        body = msg.body
        key = body.decode() if isinstance(body, bytes) else str(body)
        emit({"event": "consumed", "key": key, "queue": int(msg.queue_id), "offset": int(msg.queue_offset)})

    consumer = PushConsumer(group)
    consumer.set_namesrv_addr(ns)
    consumer.set_thread_count(2)
    consumer.subscribe(topic, on_message)
    consumer.start()
    emit({"event": "started"})
    try:
        sys.stdin.read()  # until the suite closes our stdin
    finally:
        consumer.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
