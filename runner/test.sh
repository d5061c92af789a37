#!/usr/bin/env bash
# The one test command: installs what the tests need (Debian packages when root, the Python environment),
# builds the WAR and the pinned Tomcat (JUnit 5 through Surefire) and the open-loop generators, then runs every Python test (conformance
# against the real servers, runner, load generators, analysis).
#   ./runner/test.sh            everything (on a 2-core VM 22-31 minutes with its build, 21-28 of them pytest: 5-10 two at a
#                               time, 16-18 alone; 7 more the first time, oha's build; runner/tests/README.md has the figures):
#                               what measures nothing two at a time (pytest-xdist), then the live tests that measure
#                               alone (runner/tests/README.md)
#   ./runner/test.sh --fast     only what needs no live server, no build and starts no process (1.5 minutes;
#                               tests marked spawns run tools, scripts or servers: runner/tests/spawn_guard.py)
# Further arguments go to pytest, e.g. ./runner/test.sh -k conformance -x
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"
crossbench_script_options "$0" "$@"

fast=false
if [[ "${1:-}" == "--fast" ]]; then
  fast=true
  shift
fi

# shellcheck source=runner/prerequisites.sh
source "$here/prerequisites.sh"
# sshd: the multi-host tests run one in each network namespace they make (never the system service)
crossbench_install_missing test mvn=maven chromium=chromium /usr/sbin/sshd=openssh-server
# shellcheck source=runner/python-env.sh
source "$here/python-env.sh"
cd "$CROSSBENCH_ROOT"
# Python's linter (with its import sorting) and formatter, as shellcheck is bash's (.ci/run); config in pyproject
"$PYTHON" -m ruff check --config runner/pyproject.toml --quiet .
"$PYTHON" -m ruff format --check --config runner/pyproject.toml --quiet .

tests=(runner/tests tornado-app/tests gunicorn-app/tests uvicorn-app/tests analysis/tests)

run_pytest() {
  "$PYTHON" -m pytest -c runner/pyproject.toml --rootdir "$CROSSBENCH_ROOT" "$@"
}

if $fast; then
  run_pytest -m "not live and not spawns" "${tests[@]}" "$@"
  exit
fi
mvn -B --no-transfer-progress package
"$here/install-openloop.sh"      # oha, k6 and vegeta, pinned, built once into the tools cache (needs cargo and go)
for arg in "$@"; do
  if [[ "$arg" == -m* ]]; then      # the caller picks the tests by marker: one run, one test at a time
    run_pytest "${tests[@]}" "$@"
    exit
  fi
done
# The tests that measure nothing (those that start no live server, and the live ones marked shares_cores) two at a
# time, one per core (pytest-xdist), a file's tests on one worker so its module's servers start once; then the other
# live ones one at a time: they measure on the machine's cores and must have them to themselves
# (runner/tests/README.md).
# Exit status 5 is pytest's "no test selected": arguments such as -k may leave one of the two parts empty.
status=0
run_pytest -n 2 --dist loadfile -m "not live or shares_cores" "${tests[@]}" "$@" || status=$?
live_status=0
run_pytest -m "live and not shares_cores" "${tests[@]}" "$@" || live_status=$?
for part in "$status" "$live_status"; do
  if ((part != 0 && part != 5)); then
    exit "$part"
  fi
done
if ((status == 5 && live_status == 5)); then
  exit 5
fi
