"""`python -m rooflab ...`: the CLI where the `rooflab` script is not on PATH
(pip install --user, some venvs, Windows)."""

import sys

from .cli.main import main

sys.exit(main())
