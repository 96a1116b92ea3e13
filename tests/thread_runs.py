"""Run one function in n threads at once and wait for them all (the concurrency tests)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def in_threads(target: Callable[[], object], n: int) -> None:
    threads = [threading.Thread(target=target) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
