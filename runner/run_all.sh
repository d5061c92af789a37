#!/usr/bin/env bash
# The suite's main job: ./runner/run_all.sh [--quick | --experiment NAME] [overrides...]  (--help lists them)
# Checks the tools (installing missing Debian packages when root), prepares the Python environment,
# lifts the open-file limit, then hands over to the runner (crossbench.run), which plans, measures and
# draws the charts into results/<run-id>/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=runner/prerequisites.sh
source "$here/prerequisites.sh"

case " $* " in
  *" --help "* | *" -h "* | *" --version "*) ;;
  *) crossbench_install_missing run_all ;;
esac

# shellcheck source=runner/python-env.sh
source "$here/python-env.sh"

# Many connections need many descriptors: take the hard limit; the runner refuses if that is still short.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec "$PYTHON" -m crossbench.run "$@"
