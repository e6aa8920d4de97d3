"""The dashboard's Panel app file as shipped in the package: ``ermviz serve`` runs
``panel serve`` on :data:`APP` (served at ``/app``). The folder holds only that file:
Bokeh puts the app file's folder first on ``sys.path`` while it runs it, and no module
here may shadow another."""

from pathlib import Path

#: The app file ``panel serve`` runs (its name gives the page's address, ``/app``).
APP: Path = Path(__file__).resolve().parent / "app.py"
