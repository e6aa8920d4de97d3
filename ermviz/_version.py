"""The package version, in a module of its own so that any module may read it without
importing the package (whose lazy public names would otherwise close an import cycle)."""

__version__ = "0.1.0"
