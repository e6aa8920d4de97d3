"""Work off the page's event loop: a thread of its own per job, awaited by the page.

The page's Start (:mod:`ermviz.app.views.page`, preparing a race) and the Results tab's bundled
small sweep (:mod:`ermviz.app.results.view`) both wait on :func:`in_thread`; it lives
here, below both, so that neither view imports the other for it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


async def in_thread(work: Callable[[], Any]) -> Any:
    """``await`` ``work()`` run on a thread of its own that ends with it: unlike the event
    loop's default executor, no idle worker outlives it (a server that has served many
    sessions holds as many threads as a fresh one; benchmarks/bench_load.py)."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def settle(exc: BaseException | None, result: Any) -> None:
        if not done.done():  # (cancelled when the session went away meanwhile)
            done.set_exception(exc) if exc is not None else done.set_result(result)

    def target() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting coroutine
            loop.call_soon_threadsafe(settle, exc, None)
        else:
            loop.call_soon_threadsafe(settle, None, result)

    threading.Thread(target=target, name="ermviz-prepare", daemon=True).start()
    return await done
