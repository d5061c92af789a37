"""`python -m crossbench.run.unbuilt ARGS...`: the pinned generators (oha, k6) that the run ARGS would plan need and
the tools cache lacks, one a line on stdout. run_all.sh asks it on the standard library alone and starts their
build at once, so the build runs while the Python environment is made; the runner waits for it before the first
cell (run_checks.build_generators). Arguments the runner would refuse answer nothing here: the runner says why."""

from __future__ import annotations

import contextlib
import io
import sys

from crossbench.refusal import Refusal

from .run import planned_cells
from .run_args import parse_args
from .run_checks import unbuilt_generators


def unbuilt(argv: list[str]) -> list[str]:
    """The generators to build for the run `argv` would start; none for a resumed run, a dry run or arguments
    the runner refuses."""
    with contextlib.redirect_stderr(io.StringIO()):  # the plan's own lines are the runner's to print
        try:
            args = parse_args(argv)
            if args.resume or args.dry_run:
                return []
            args.dry_run = True  # planned as --dry-run plans: nothing written, cells it would refuse kept
            cells = planned_cells(args)[2]
        except (Refusal, SystemExit):
            return []
    return list(unbuilt_generators(cells))


if __name__ == "__main__":
    for name in unbuilt(sys.argv[1:]):  # nothing at all when nothing is to build: run_all.sh starts no build then
        print(name)
