"""``python -m ermviz``: see :mod:`ermviz.cli`."""

import sys

from ermviz.cli import main

sys.exit(main())
