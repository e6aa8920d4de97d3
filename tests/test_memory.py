"""The served process's memory between sessions (issue 32): one collection and trim per
burst of closed pages (Panel's own dropped), long-lived objects frozen while no session is
open, and the warm-up's kernels frozen at once, the pages then open freed at the next idle
release."""

from __future__ import annotations

import asyncio
import gc

import pytest

from ermviz.app.serving import memory


def test_a_burst_of_closed_pages_costs_one_release(monkeypatch):
    calls = []
    monkeypatch.setattr(memory, "release", lambda: calls.append(memory.open_sessions()))
    monkeypatch.setattr(memory, "RELEASE_DELAY", 0.2)
    monkeypatch.setattr(memory, "_open_sessions", 0)

    async def class_leaves() -> None:
        for _ in range(5):
            memory.session_opened()
        for _ in range(5):
            memory.session_closed()
            await asyncio.sleep(0.05)  # each close pushes the release back
        assert calls == []
        await asyncio.sleep(0.4)

    asyncio.run(class_leaves())
    assert calls == [0]  # once, after the last close, with no session left


@pytest.mark.slow
def test_objects_are_frozen_only_when_no_session_is_open(monkeypatch):
    monkeypatch.setattr(memory, "_open_sessions", 1)
    try:
        frozen = gc.get_freeze_count()
        kept = [[i] for i in range(1000)]  # a live session's objects
        memory.release()
        assert gc.get_freeze_count() == frozen  # a live session's objects stay collectable
        monkeypatch.setattr(memory, "_open_sessions", 0)
        memory.release()
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        gc.unfreeze()


class _Cycle:
    """An object only the cyclic collector frees (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


def test_kernels_frozen_with_pages_open_free_those_pages_at_the_next_idle_release(
    monkeypatch,
):
    import weakref

    monkeypatch.setattr(memory, "_frozen_sessions", False)
    monkeypatch.setattr(memory, "_open_sessions", 1)
    try:
        page = _Cycle()  # an open page's objects
        gone = weakref.ref(page)
        memory._freeze_now()  # the warm-up ended while the page was open
        del page  # the page closes
        gc.collect()
        assert gone() is not None  # frozen with the kernels: out of the collector's sight
        memory.release()  # a page is still open: nothing thawed yet
        assert gone() is not None
        monkeypatch.setattr(memory, "_open_sessions", 0)
        memory.release()
        assert gone() is None  # the first idle release collects it
        assert memory._frozen_sessions is False
    finally:
        gc.unfreeze()


def test_a_release_takes_the_place_of_panels_own_collection():
    import panel as pn
    from panel.io.document import _garbage_collect

    async def page_closed() -> None:
        # What Panel does when it destroys a session: a full collection 5 s later.
        pn.state.schedule_task("gc.collect", _garbage_collect, at=_in(5.0))
        assert any(k.endswith("_gc.collect") for k in pn.state._scheduled)
        memory.release()
        assert not any(k.endswith("_gc.collect") for k in pn.state._scheduled)

    try:
        asyncio.run(page_closed())
    finally:
        gc.unfreeze()


def _in(seconds: float):
    import datetime as dt

    return dt.datetime.now() + dt.timedelta(seconds=seconds)
