#!/usr/bin/env bash
# The project's own PostgreSQL, by hand: `./runner/db.sh start` runs a throwaway cluster with the tables in the
# foreground (Ctrl-C stops it) and prints its URL for `./runner/serve.sh NAME --db-url URL`;
# `./runner/db.sh load URL` loads the tables into an existing database. Needs: postgresql postgresql-contrib.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"
crossbench_python_command db crossbench.database "$@"
