"""``rocketq.admin``: the admin client behind ``mqadmin`` (``client.admin.admin_client``), for scripts::

async with AdminClient("127.0.0.1:9876") as admin:
    print(await admin.topic_list())
"""

from __future__ import annotations

import rocketq  # noqa: F401  (pins the top-level packages first: rocketq._packages)

# isort: split
from client.admin.admin_client import AdminClient, RunningInfo

__all__ = ["AdminClient", "RunningInfo"]
