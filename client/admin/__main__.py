"""``python -m client.admin`` is ``mqadmin``."""

from __future__ import annotations

import sys

from client.admin.cli import main

sys.exit(main())
