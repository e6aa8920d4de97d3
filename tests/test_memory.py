"""The served process's memory between sessions (issue 32): one collection and trim per
burst of closed pages, and long-lived objects frozen only while no session is open."""

from __future__ import annotations

import asyncio
import gc

from ermviz.app import memory


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
