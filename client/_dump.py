"""A text dump of every thread's stack and every asyncio task's, for GET_CONSUMER_RUNNING_INFO's ``jstack`` (J sends
a JVM thread dump there when the request sets ``jstackEnable``)."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import traceback


def thread_dump() -> str:
    out = io.StringIO()
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        out.write(f'"{names.get(ident, "?")}" tid={ident}\n')
        out.writelines("    " + line for line in traceback.format_stack(frame))
        out.write("\n")
    try:
        tasks = asyncio.all_tasks()
    except RuntimeError:  # no running loop in this thread
        tasks = set()
    for task in sorted(tasks, key=lambda t: t.get_name()):
        out.write(f'task "{task.get_name()}"\n')
        for frame in task.get_stack():
            out.writelines("    " + line for line in traceback.format_stack(frame, limit=1))
        out.write("\n")
    return out.getvalue()
