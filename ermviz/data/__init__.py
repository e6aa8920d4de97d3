"""Datasets: the catalog, where files are looked for, parsing, bundled sets, preprocessing.

Every dataset reaches the rest of ermviz as a :class:`Dataset`: a design matrix ``X`` of
shape ``(n, p)`` (dense C-contiguous ``float64`` or canonical CSR), a target ``y`` of shape
``(n,)`` (``-1.0``/``+1.0`` for binary tasks, raw values for regression) and, when the data
comes with one, a test split. Load one with :func:`load_dataset` from a catalog name, a
bundled name or a path; its arrays are read-only and shared through a cache.

The package, from the bottom up (each module imports only the ones above it):

* :mod:`~ermviz.data.dataset`: the :class:`Dataset` container, its validation and storage;
* :mod:`~ermviz.data.sources`: the catalog (``datasets/catalog.toml``) and the search path;
* :mod:`~ermviz.data.readers`: parsing LIBSVM and CSV/TSV files;
* :mod:`~ermviz.data.labels`: mapping raw labels to -1/+1;
* :mod:`~ermviz.data.generators`: bundled sets (scikit-learn's and seeded generators);
* :mod:`~ermviz.data.cache`: downloads (pooch) and the in-memory and on-disk caches;
* :mod:`~ermviz.data.loader`: :func:`load_dataset`, :func:`locate`, :func:`list_datasets`;
* :mod:`~ermviz.data.preprocessing`: split, standardize, normalize, intercept (when asked).
"""

from __future__ import annotations

from ermviz.data.cache import clear_cache
from ermviz.data.dataset import (
    DENSE_MAX_ENTRIES,
    DENSE_MIN_DENSITY,
    TASKS,
    Dataset,
    DataWarning,
)
from ermviz.data.generators import _BUNDLED as _BUNDLED
from ermviz.data.generators import bundled_names
from ermviz.data.loader import list_datasets, load_dataset, locate
from ermviz.data.preprocessing import (
    add_intercept,
    normalize_rows,
    preprocess,
    standardize,
    train_test_split,
)
from ermviz.data.sources import (
    CATALOG_PATH,
    REPO_DATASETS,
    CatalogEntry,
    cache_dir,
    catalog,
    search_path,
)
from ermviz.data.sources import _find_file as _find_file

__all__ = [
    "CATALOG_PATH",
    "DENSE_MAX_ENTRIES",
    "DENSE_MIN_DENSITY",
    "REPO_DATASETS",
    "TASKS",
    "CatalogEntry",
    "DataWarning",
    "Dataset",
    "add_intercept",
    "bundled_names",
    "cache_dir",
    "catalog",
    "clear_cache",
    "list_datasets",
    "load_dataset",
    "locate",
    "normalize_rows",
    "preprocess",
    "search_path",
    "standardize",
    "train_test_split",
]
