"""The datasets the dashboard offers: bundled sets, catalog files found on this server's
disk and files the user uploaded; their labels in the dataset list, the suggested set-up
applied when one is picked (:data:`DATASET_PRESETS`), and the checks and storage of an
uploaded file.

An uploaded file is named ``upload:<file name>`` in the dataset list (a name no link can
carry, see :mod:`ermviz.app.state.urlstate`) and lives in a temporary folder of its session,
deleted when the session ends (:meth:`~ermviz.app.state.model.DashboardModel.add_upload`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

from ermviz import data as data_mod
from ermviz.app.state.messages import one_line
from ermviz.errors import DataError

#: Largest file the upload accepts.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: Prefix of the names uploaded files get in the dataset list (never valid in a link).
UPLOAD_PREFIX = "upload:"

# The dashboard opens on svm-dual's default race, FW vs AFW vs PFW (wdbc standardized,
# C = 1000, tol 1e-10; measured on 2 cores with the Gram-column cache, each run alone: PFW
# converges at about 2.6 s of solver time, AFW at about 3.6 s, while vanilla FW is still at
# a gap of ~3e-6 when the 10 s budget ends it; racing three runs on two cores stretches
# that by about half).

# Suggested set-ups applied when the user picks a dataset (not when a link sets one).
_RACE_PRESET: dict[str, Any] = {
    "problem": "svm-dual",
    "problem_settings": {},
    # The data as published: preprocessing is part of a set-up (a lesson's standardize
    # must not follow the user to the next dataset unseen).
    "standardize": False,
    "normalize": False,
    "test_size": 0.0,
    "tol": 1e-6,
    # No iteration cap that could bind before the time budget (coordinate descent records
    # ~30 000 rows a second on small data).
    "max_iter": 100_000_000,
    "max_time": 30.0,
    "animate": False,
}
#: Teaching set-ups: tiny problems whose feasible set can be drawn, iterates kept and
#: slowed down. toy-2d uses radius 3 because the optimum then lies inside an edge of the
#: l1 diamond, where vanilla FW zig-zags between two vertices (radius 1: a vertex is
#: optimal and every method stops after two steps).
DATASET_PRESETS: dict[str, dict[str, Any]] = {
    "wdbc": {
        "problem": "svm-dual",
        "problem_settings": {"C": 1000.0},
        "standardize": True,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-10,
        "max_iter": 100_000_000,
        "max_time": 10.0,
        "animate": False,
    },
    "toy-simplex-3": {
        "problem": "svm-dual",
        "problem_settings": {},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-6,
        "max_iter": 400,
        "max_time": 30.0,
        "animate": True,
    },
    "toy-simplex-4": {
        "problem": "svm-dual",
        "problem_settings": {},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-6,
        "max_iter": 400,
        "max_time": 30.0,
        "animate": True,
    },
    # A nonlinear boundary in the plane: the Teaching view draws each LS-SVM run's.
    "moons": {
        "problem": "lssvm",
        "problem_settings": {"C": 10.0, "sigma2": 0.1},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-10,
        "max_iter": 100_000_000,
        "max_time": 30.0,
        "animate": False,
    },
    # Conditional stochastic optimization: BSGD, BSpiderBoost and SAA on invariant logistic
    # regression (the paper's middle noise ratio); plot against samples to compare budgets.
    # At the family's calibrated defaults (ermviz/families/cso/problem.py: the paper's
    # Table 4 set-up) BSGD (m = 10) ends at a gap of 1.4e-4, SAA (the paper's m = 464) at
    # 6.5e-4 and BSpiderBoost (not in the paper's Table 4) at 1.0e-3 (seed 0, measured).
    "cso-synthetic": {
        "problem": "invariant-logreg",
        "problem_settings": {"noise_ratio": 10.0},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-8,
        "max_iter": 100_000_000,
        "max_time": 10.0,
        # One budget for the three (SAA draws all of it at once): a fair race in samples.
        "max_samples": 2_000_000,
        "animate": False,
    },
    # Meta-learning: BSGD, FO-MAML, Adam and BSpiderBoost on MAML's sine tasks, one budget
    # of samples (about 10-20 s per run on a free core).
    "sine-tasks": {
        "problem": "maml-sine",
        "problem_settings": {},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-8,
        "max_iter": 100_000_000,
        "max_time": 60.0,
        "max_samples": 2_000_000,
        "animate": False,
    },
    # A fairness-constrained SVM large enough to watch ReHLine and the interior-point
    # method close the duality gap live (the rehline-fairness lesson's set-up, spelled out
    # setting by setting so the sidebar shows the constraint).
    "fairness-synthetic": {
        "problem": "plq",
        "problem_settings": {"C": 0.1, "constraint": "fairness", "rho": 0.01},
        "standardize": True,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-6,
        "max_iter": 100_000_000,
        "max_time": 30.0,
        "animate": False,
    },
    # Matrix completion over a nuclear-norm ball: the triplets are indices, so no scaling.
    # At the default radius (held-out RMSE ~0.47 against 0.70 for the mean) BPCG reaches a
    # gap of 1e-4 in ~6 s alone; 1e-6 takes minutes (a spectrahedral face, not a polytope's).
    "lowrank-ratings": {
        "problem": "matrix-completion",
        "problem_settings": {},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-4,
        "max_iter": 100_000_000,
        "max_time": 15.0,
        "animate": False,
    },
    "toy-2d": {
        "problem": "logreg-l1",
        "problem_settings": {"radius": 3.0},
        "standardize": False,
        "normalize": False,
        "test_size": 0.0,
        "tol": 1e-6,
        "max_iter": 400,
        "max_time": 30.0,
        "animate": True,
    },
}

# A samples budget belongs to the set-up that asks for one: every other preset clears it.
for _preset in (_RACE_PRESET, *DATASET_PRESETS.values()):
    _preset.setdefault("max_samples", 0.0)

#: Bundled sets: name -> (task, n, p, description) as the data layer declares them.
BUNDLED = getattr(data_mod, "_BUNDLED", {})


#: Regression data without a preset of its own (cadata, abalone, kin8nm, house_8L, ...):
#: least squares over the l1 ball, whose radius then defaults to half the l1 norm of the
#: unconstrained solution (the constraint binds), raced FW vs AFW vs PFW.
_REGRESSION_PRESET: dict[str, Any] = {
    **_RACE_PRESET,
    "problem": "least-squares",
    "standardize": True,
    "normalize": False,
    "test_size": 0.0,
}


def _task(name: str) -> str | None:
    try:
        entry = data_mod.catalog().get(name)
    except DataError:
        entry = None
    if entry is not None:
        return entry.task
    spec = BUNDLED.get(name)
    return spec.task if spec is not None else None


#: The preprocessing fields of a preset, and how a change of each reads.
PREPROCESSING = ("standardize", "normalize", "test_size")


def preprocessing_change(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Words for what a dataset's preset changed in the preprocessing (empty: nothing),
    e.g. ``"standardize off"``, so a switch of dataset never changes the data unseen."""
    said = []
    for key in PREPROCESSING:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(new, bool):
            said.append(f"{key} {'on' if new else 'off'}")
        else:
            said.append(f"{key.replace('_', ' ')} {new:g}")
    return ", ".join(said)


def preset_for(name: str) -> dict[str, Any]:
    """The suggested set-up of dataset ``name``: its own preset, else least squares for
    regression data, else the generic race preset (the SVM dual)."""
    if name in DATASET_PRESETS:
        return DATASET_PRESETS[name]
    if _task(name) == "regression":
        return _REGRESSION_PRESET
    return _RACE_PRESET


def available_datasets() -> dict[str, list[str]]:
    """Dataset names the dashboard offers, grouped: bundled sets and catalog files on disk."""
    bundled = list(data_mod.bundled_names())
    on_disk = []
    try:
        entries = data_mod.catalog()
    except DataError:
        entries = {}
    for name in entries:
        try:
            if data_mod.locate(name) is not None:
                on_disk.append(name)
        except DataError:
            continue
    return {"bundled": bundled, "catalog": on_disk}


def describe_dataset(name: str) -> str:
    """A short label for the dataset list: ``name (task, n x p)``."""
    if name.startswith(UPLOAD_PREFIX):
        return f"{name[len(UPLOAD_PREFIX) :]} (uploaded)"
    try:
        entry = data_mod.catalog().get(name)
    except DataError:
        entry = None
    if entry is not None:
        return f"{name} ({entry.task}, {entry.n} x {entry.p})"
    spec = BUNDLED.get(name)
    if spec is not None:
        return f"{name} ({spec.task}, {spec.n} x {spec.p})"
    return name


# -- uploaded files --------------------------------------------------------------------


#: Longest name an uploaded file is stored under (file systems refuse names over 255 bytes).
MAX_UPLOAD_NAME = 100


def upload_file_name(filename: str) -> str:
    """The uploaded file's own name, safe as a file name (no folders, no leading dot, at
    most :data:`MAX_UPLOAD_NAME` characters, its extensions such as ``.csv.gz`` kept)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(str(filename)).name).lstrip(".") or "upload"
    if len(safe) > MAX_UPLOAD_NAME:
        tail = re.search(r"(\.[A-Za-z0-9]{1,8}){0,2}$", safe).group(0)  # type: ignore[union-attr]
        safe = safe[: MAX_UPLOAD_NAME - len(tail)] + tail
    return safe


def upload_refusal(safe: str, content: bytes) -> str | None:
    """Why ``content`` (uploaded as ``safe``) is refused before it is stored: over
    :data:`MAX_UPLOAD_BYTES`, or empty; None when it may be stored. Every refusal of an
    upload says that nothing was loaded (the dataset selected stays as it was)."""
    if len(content) > MAX_UPLOAD_BYTES:
        return (
            f"{safe}: {len(content) / 2**20:.1f} MB is over the {MAX_UPLOAD_BYTES // 2**20} MB "
            "upload limit, so nothing was loaded; use a catalog dataset or a smaller file"
        )
    if not content.strip():
        return f"{safe}: the file is empty, so nothing was loaded"
    return None


class UploadFolder:
    """A session's temporary folder of uploaded files: created by the first upload,
    deleted by :meth:`close`, or else when its owner (the session's model) is collected or
    the interpreter exits (a notebook's model, a session never closed): no files left."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self._cleanup: weakref.finalize | None = None

    def store(self, safe: str, content: bytes) -> Path:
        """:func:`store_upload` into this folder (created now if need be)."""
        if self.path is None:
            self.path = Path(tempfile.mkdtemp(prefix="ermviz-upload-"))
            self._cleanup = weakref.finalize(
                self, shutil.rmtree, str(self.path), ignore_errors=True
            )
        return store_upload(self.path, safe, content)

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
            self.path = self._cleanup = None


def store_upload(folder: Path, safe: str, content: bytes) -> Path:
    """Write ``content`` as ``safe`` in a new sub-folder of ``folder`` and check that the
    data layer reads it; returns its path.

    Raises :class:`~ermviz.errors.DataError` naming the user's file (not the server's
    temporary path) when it does not parse; nothing is left behind then.
    """
    sub: Path | None = None
    try:
        sub = Path(tempfile.mkdtemp(dir=folder))
        path = sub / safe
        path.write_bytes(content)
    except OSError as exc:
        if sub is not None:
            shutil.rmtree(sub, ignore_errors=True)
        raise DataError(
            f"could not store {safe} on the server ({type(exc).__name__}: {exc.strerror or exc})"
            ", so nothing was loaded; try again later, or use a catalog dataset"
        ) from None
    try:
        data_mod.load_dataset(path)
    except Exception as exc:
        shutil.rmtree(sub, ignore_errors=True)
        # Name the user's file, not the server's temporary path (as given or resolved).
        message = one_line(exc).replace(str(path.resolve()), safe).replace(str(path), safe)
        raise DataError(f"could not read {safe}, so nothing was loaded: {message}") from exc
    return path
