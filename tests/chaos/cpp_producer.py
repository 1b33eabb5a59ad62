"""The official C++ client (PyPI ``rocketmq`` 0.4.4) as a continuous producer for the chaos suite, in its own process
(librocketmq is not fork-safe and can crash its host).

    python tests/chaos/cpp_producer.py NAMESRV TOPIC

Sends ``cpp-<seq>`` (body and key) with ``send_sync`` one at a time until stdin closes; prints one JSON line per
send: ``{"event":"sent","key","status","offset","sent","acked"}`` or
``{"event":"error","key","error","acked"}`` (times are ``time.time()``).
"""

from __future__ import annotations

import json
import sys
import threading
import time


def main() -> int:
    from rocketmq.client import Message, Producer

    ns, topic = sys.argv[1], sys.argv[2]
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    producer = Producer("PG_chaos_cpp", timeout=3000)
    producer.set_namesrv_addr(ns)
    producer.start()
    seq = 0
    try:
        while not stop.is_set():
            key = f"cpp-{seq}"
            msg = Message(topic)
            msg.set_keys(key)
            msg.set_body(key.encode())
            began = time.time()
            try:
                res = producer.send_sync(msg)
                ev = {
                    "event": "sent",
                    "key": key,
                    "status": int(res.status),
                    "offset": res.offset,
                }
            except Exception as exc:  # a failed send is a data point, not an end
                ev = {"event": "error", "key": key, "error": str(exc)[:200]}
                time.sleep(0.05)
            ev.update(sent=began, acked=time.time())
            print(json.dumps(ev), flush=True)
            seq += 1
    finally:
        producer.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
