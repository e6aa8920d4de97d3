"""Labels: mapping raw labels of a file to -1/+1 (binary tasks) and checking the mapping.

Binary labels are mapped by the catalog's explicit mapping, by a user's ``label_map``, or,
for user files without one, automatically (the larger of two labels becomes +1).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ermviz.data.readers import _Parsed
from ermviz.errors import DataError


def _label_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return f"{value:+g}" if value in (-1.0, 1.0) else f"{value:g}"
    return repr(value) if isinstance(value, str) else f"{value:g}"


def _mapping_text(mapping: Mapping[Any, float]) -> str:
    return "{" + ", ".join(f"{_label_text(k)}: {v:+g}" for k, v in mapping.items()) + "}"


def _normalize_label_map(label_map: Mapping[Any, Any]) -> tuple[tuple[Any, float], ...]:
    """Validate a user's label_map; numeric keys become floats, text keys stay text."""
    if not isinstance(label_map, Mapping) or not label_map:
        raise DataError(
            f"label_map must be a non-empty dict from raw label to -1 or +1, got {label_map!r}"
        )
    pairs = []
    for key, value in label_map.items():
        if isinstance(value, bool) or value not in (-1, 1):
            raise DataError(
                f"label_map maps {key!r} to {value!r}; every raw label must map to -1 or +1"
            )
        if isinstance(key, bool):
            raise DataError(f"label_map key {key!r} must be a number or a text label")
        if isinstance(key, str):
            try:
                norm: Any = float(key)
            except ValueError:
                norm = key.strip()
        elif isinstance(key, int | float | np.integer | np.floating):
            norm = float(key)
        else:
            raise DataError(f"label_map key {key!r} must be a number or a text label")
        pairs.append((norm, float(value)))
    return tuple(pairs)


def _auto_mapping(parsed: _Parsed) -> dict[Any, float]:
    """Two distinct labels: the larger becomes +1 (user files without a label_map)."""
    values = np.unique(parsed.y)
    if parsed.y.dtype == object:
        raise DataError(
            f"{parsed.path}: the labels are text ({', '.join(map(repr, values[:4]))}); pass "
            f"label_map={{{values[0]!r}: -1, {values[-1]!r}: 1}} (or your choice of +1)"
        )
    if values.size == 1:
        raise _single_class(parsed.path, values[0], None)
    if values.size > 2:
        shown = ", ".join(_label_text(float(v)) for v in values[:5])
        raise DataError(
            f"{parsed.path}: has {values.size} distinct labels ({shown}, ...) but the task is "
            "binary; pass label_map={raw: -1 or 1, ...} covering each label, or "
            "task='regression'"
        )
    return {values[0]: -1.0, values[1]: 1.0}


def _single_class(path: Path, raw: Any, mapped: float | None) -> DataError:
    sign = _label_text(mapped if mapped is not None else raw)
    detail = f" (raw label {_label_text(raw)})" if mapped not in (None, raw) else ""
    return DataError(
        f"{path}: has only label {sign}{detail}; a binary problem needs both classes; "
        "use a file with both classes, or task='regression'"
    )


def _map_labels(parsed: _Parsed, mapping: Mapping[Any, float], name: str) -> np.ndarray:
    y = parsed.y
    out = np.zeros(y.shape[0], dtype=np.float64)
    known = np.zeros(y.shape[0], dtype=bool)
    for raw, target in mapping.items():
        if (y.dtype == object) != isinstance(raw, str):
            continue
        hit = y == raw
        out[hit] = target
        known |= hit
    if not known.all():
        row = int(np.flatnonzero(~known)[0])
        raw = y[row]
        raw_text = _label_text(raw if isinstance(raw, str) else float(raw))
        raise DataError(
            f"{parsed.path} line {parsed.line_of(row)}: label {raw_text} is not in the label "
            f"mapping {_mapping_text(mapping)} of {name}; pass label_map={{...}} covering it, "
            "or fix the file"
        )
    return out
