#!/usr/bin/env bash
# The one test command: builds the WAR and the pinned Tomcat (JUnit 5 through Surefire), then runs every
# Python test (conformance against the real servers, runner, load generators, analysis).
# Extra arguments go to pytest, e.g. ./runner/test.sh -k conformance -x
set -euo pipefail
# shellcheck source=runner/python-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/python-env.sh"
cd "$CROSSBENCH_ROOT"

mvn -B --no-transfer-progress package
"$PYTHON" -m pytest -c runner/pyproject.toml --rootdir "$CROSSBENCH_ROOT" \
  runner/tests tornado-app/tests analysis/tests "$@"
