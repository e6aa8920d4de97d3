"""Deprecated alias of :mod:`ermviz.app.views.race_status` (moved in issue 46).

Importing it warns and gives that module (:mod:`ermviz.app._moved`).
"""

from ermviz.app._moved import alias

alias(globals())
