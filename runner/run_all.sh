#!/usr/bin/env bash
# The suite's main job: ./runner/run_all.sh [--quick | --experiment NAME] [overrides...]  (--help lists them)
# Checks the tools (installing missing Debian packages when root), prepares the Python environment,
# lifts the open-file limit, then hands over to the runner (crossbench.run), which plans, measures and
# draws the charts into results/<run-id>/. --help, --version and --dry-run (the plan and what is missing, with
# the command that installs each) install, build and write nothing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=runner/prerequisites.sh
source "$here/prerequisites.sh"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"

if crossbench_answers_alone "$@"; then
  status=0
  crossbench_from_source run_all crossbench.run "$@" || status=$?
  case " $* " in
    *" --help "* | *" -h "* | *" --version "*) ;;
    *) if ((status == 0)); then
         crossbench_say_missing run_all
         # shellcheck source=runner/python-env.sh
         source "$here/python-env.sh" --check run_all
       fi ;;
  esac
  exit "$status"
fi

crossbench_install_missing run_all

# shellcheck source=runner/python-env.sh
source "$here/python-env.sh"

# Many connections need many descriptors: take the hard limit; the runner refuses if that is still short.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec "$PYTHON" -m crossbench.run "$@"
