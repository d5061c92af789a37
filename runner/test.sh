#!/usr/bin/env bash
# The one test command: installs what the tests need (Debian packages when root, the Python environment),
# builds the WAR and the pinned Tomcat (JUnit 5 through Surefire) and the open-loop generators, then runs every Python test (conformance
# against the real servers, runner, load generators, analysis).
#   ./runner/test.sh            everything (about 24 minutes here with its build, 10 more the first time: oha and k6 build)
#   ./runner/test.sh --fast     only what needs no live server, no build and starts no process (under a minute;
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

markers=()
if $fast; then
  markers=(-m "not live and not spawns")
else
  mvn -B --no-transfer-progress package
  "$here/install-openloop.sh"      # oha and k6, pinned, built once into the tools cache (needs cargo and go)
fi
"$PYTHON" -m pytest -c runner/pyproject.toml --rootdir "$CROSSBENCH_ROOT" "${markers[@]}" \
  runner/tests tornado-app/tests gunicorn-app/tests uvicorn-app/tests analysis/tests "$@"
