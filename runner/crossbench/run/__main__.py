"""`python -m crossbench.run` (run_all.sh): the runner, run.py's main."""

import sys

from .run import main

sys.exit(main())
