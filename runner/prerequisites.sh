#!/usr/bin/env bash
# Sourced by run_all.sh and test.sh: the Debian packages the suite needs, found by a command each provides;
# missing ones are installed when running as root (apt-get), otherwise the apt-get line is printed and we stop.
# Usage: crossbench_install_missing CALLER [command=package ...]   (extra pairs for what only the caller needs)

declare -A CROSSBENCH_PACKAGE_OF=(
  [wrk]=wrk [ab]=apache2-utils [gnuplot]=gnuplot-nox [taskset]=util-linux [setpriv]=util-linux
  [java]=openjdk-17-jdk-headless [python3]=python3 [ss]=iproute2 [nginx]=nginx-light [psql]=postgresql-client [pgbouncer]=pgbouncer
  [ssh]=openssh-client
)

crossbench_missing_packages() {
  local tool pair
  for tool in "${!CROSSBENCH_PACKAGE_OF[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || echo "${CROSSBENCH_PACKAGE_OF[$tool]}"
  done
  for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null 2>&1 || echo "${pair#*=}"
  done
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || echo python3-venv
  [[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || echo fonts-dejavu-core
  # the run's own PostgreSQL (database cells): Debian keeps the server out of PATH, in /usr/lib/postgresql/N/bin
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || echo postgresql
  compgen -G '/usr/share/postgresql/*/extension/pg_stat_statements.control' >/dev/null || echo postgresql-contrib
}

crossbench_install_missing() {
  local caller="$1" missing
  shift
  mapfile -t missing < <(crossbench_missing_packages "$@" | sort -u)
  ((${#missing[@]})) || return 0
  crossbench_apt_install "$caller" "${missing[@]}"
}

# crossbench_say_missing CALLER [command=package ...]: the packages crossbench_install_missing would install and the
# line that installs them, said and not done (run_all.sh --dry-run)
crossbench_say_missing() {
  local caller="$1" missing
  shift
  mapfile -t missing < <(crossbench_missing_packages "$@" | sort -u)
  ((${#missing[@]})) || return 0
  echo "$caller: missing: Debian packages ${missing[*]}: the run installs them first when root, or now:" \
    "sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
}

# crossbench_apt_install CALLER PACKAGE...: installs them when root with apt-get, else prints the line and stops
crossbench_apt_install() {
  local caller="$1"
  shift
  if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "$caller: installing $*" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
  else
    echo "$caller: missing tools; install them with:" >&2
    echo "  sudo apt-get install -y $*" >&2
    exit 2
  fi
}
