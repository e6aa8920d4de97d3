"""Kernel modules that load when a family is first used, not when the registry is imported.

Importing :mod:`ermviz.registry` lists every family's problems and methods; importing
their numba kernels too cost about a second (numba itself, every family's kernels, the
nuclear-norm LMO's Lanczos) in every process, even one that only lists methods or runs
one method of one family. A family module therefore names its kernel modules with
:func:`kernel_module` instead of importing them::

    fw = kernel_module("solvers.fw", globals())

``fw`` stands for :mod:`solvers.fw` until code first reads an attribute of it (building
a solver, evaluating a certificate); then the module is imported (under Python's import
lock, so two threads never see it half loaded) and the placeholder rebinds every global
of the owning module that named it to the real module, so later calls cost what a plain
``import`` would and patches of the real module are seen. A class attribute that is a
kernel constant (a solver's record ``columns``) is a :class:`KernelConstant`, read when
first asked for.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _KernelModule:
    """Placeholder of a module of :mod:`solvers`; see the module docstring."""

    def __init__(self, name: str, owner: dict[str, Any]) -> None:
        self._name = name
        self._owner = owner

    def _load(self) -> ModuleType:
        module = importlib.import_module(self._name)
        for key, value in list(self._owner.items()):
            if value is self:
                self._owner[key] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy/pickle/inspect probing: not a kernel lookup
            raise AttributeError(attr)
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        return f"<kernel module {self._name!r}, not loaded yet>"


def kernel_module(name: str, owner: dict[str, Any]) -> Any:
    """A stand-in for the module ``name`` that imports it on first attribute access and
    then replaces itself in ``owner`` (the calling module's ``globals()``)."""
    return _KernelModule(name, owner)


class KernelConstant:
    """A class attribute read from a kernel module when first asked for (e.g. a solver's
    ``columns = KernelConstant("solvers.fw", "FW_RECORD_COLUMNS")``)."""

    def __init__(self, module: str, name: str) -> None:
        self._module = module
        self._name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        try:
            return self._value
        except AttributeError:  # first read: import the kernel module now
            self._value = getattr(importlib.import_module(self._module), self._name)
            return self._value
