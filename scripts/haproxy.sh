#!/usr/bin/env bash
# HAProxy 2.6.12 from Debian bookworm's package haproxy=2.6.12-1+deb12u3, as a round-robin HTTP
# load balancer in front of several MCP servers on 127.0.0.1.
#   scripts/haproxy.sh install          installs it (once, cached) and prints the path of the
#                                       `haproxy` to run (a wrapper setting LD_LIBRARY_PATH)
#   scripts/haproxy.sh start RUN_DIR FRONT_PORT BACKEND_PORT...
#                                       writes RUN_DIR/haproxy.cfg, checks it and starts haproxy
#                                       on 127.0.0.1:FRONT_PORT in front of 127.0.0.1:BACKEND_PORT
#                                       each; returns once the front port accepts connections
#   scripts/haproxy.sh stop RUN_DIR     stops that run's haproxy and removes RUN_DIR
# The .deb is unpacked with `dpkg -x`, not installed: nothing outside the cache changes. The
# shared libraries it needs that this machine lacks (liblua5.3, libopentracing-c-wrapper) are
# unpacked beside it from their own pinned packages.
set -euo pipefail
cd "$(dirname "$0")/.."
# In the user's own cache directory, not /tmp: a binary found there is run.
cache="${AI_TOOL_HAPROXY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ai-tool-haproxy}"
version="2.6.12-1+deb12u3"
# The wrapper finds the unpacked binary and libraries beside itself, so the tree can be moved.
bin="$cache/dist/bin/haproxy"
# The package to unpack for each library the binary may find missing, pinned to bookworm's build.
declare -A lib_packages=(
    [liblua5.3.so.0]="liblua5.3-0=5.3.6-2"
    [libopentracing-c-wrapper.so.0]="libopentracing-c-wrapper0=1.1.3-3+b1"
    [libopentracing.so.1]="libopentracing1=1.6.0-4"
)

# Prints the sonames the binary $1 needs that the loader cannot find with LD_LIBRARY_PATH=$2.
missing_libs() {
    LD_LIBRARY_PATH="$2" ldd "$1" | awk '/=> not found/ { print $1 }'
}

# Downloads the pinned packages $2... into $1/debs and unpacks them into $1/dist.
download() {
    local tmp="$1"
    shift
    mkdir -p "$tmp/debs"
    # apt's sandbox user `_apt` cannot write to a mktemp directory: download as the caller.
    if ! (cd "$tmp/debs" && apt-get download -o APT::Sandbox::User="$(id -un)" "$@") \
        >"$tmp/apt.log" 2>&1; then
        cat "$tmp/apt.log" >&2
        echo "scripts/haproxy.sh: apt-get download $* failed: the pinned version (haproxy" \
            "$version, Debian bookworm) is not in this machine's apt sources; run apt-get" \
            "update, or pin the version the mirror has now" >&2
        rm -rf "$tmp"
        exit 1
    fi
    local deb
    for deb in "$tmp"/debs/*.deb; do dpkg -x "$deb" "$tmp/dist"; done
    rm -rf "$tmp/debs"
}

install() {
    [ -x "$bin" ] && return
    mkdir -p "$(dirname "$cache")"
    local tmp
    tmp="$(mktemp -d "$(dirname "$cache")/ai-tool-haproxy-install.XXXXXX")"
    download "$tmp" "haproxy=$version"
    local libdir="$tmp/dist/usr/lib/x86_64-linux-gnu" exe="$tmp/dist/usr/sbin/haproxy"
    local soname packages=() seen=""
    # The libraries the unpacked ones need in turn (libopentracing for the wrapper) show up once
    # those are unpacked: repeat until nothing new is missing.
    while true; do
        packages=()
        for soname in $(missing_libs "$exe" "$libdir"); do
            if [ -z "${lib_packages[$soname]:-}" ]; then
                echo "scripts/haproxy.sh: haproxy $version needs $soname, which this machine" \
                    "lacks and no pinned package provides" >&2
                rm -rf "$tmp"
                exit 1
            fi
            case " $seen " in *" ${lib_packages[$soname]} "*) continue ;; esac
            packages+=("${lib_packages[$soname]}")
            seen="$seen ${lib_packages[$soname]}"
        done
        [ "${#packages[@]}" = 0 ] && break
        download "$tmp" "${packages[@]}"
    done
    if [ -n "$(missing_libs "$exe" "$libdir")" ]; then
        echo "scripts/haproxy.sh: haproxy $version still lacks libraries:" \
            "$(missing_libs "$exe" "$libdir")" >&2
        rm -rf "$tmp"
        exit 1
    fi
    mkdir -p "$tmp/dist/bin"
    cat >"$tmp/dist/bin/haproxy" <<'SH'
#!/bin/sh
# Runs the haproxy unpacked beside this script with the libraries unpacked beside it.
dist="$(dirname "$(dirname "$(readlink -f "$0")")")"
LD_LIBRARY_PATH="$dist/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    exec "$dist/usr/sbin/haproxy" "$@"
SH
    chmod 755 "$tmp/dist/bin/haproxy"
    if ! "$tmp/dist/bin/haproxy" -vv >"$tmp/vv.log" 2>&1; then
        cat "$tmp/vv.log" >&2
        echo "scripts/haproxy.sh: the unpacked haproxy $version does not run" >&2
        rm -rf "$tmp"
        exit 1
    fi
    chmod -R a+rX "$tmp/dist"
    mkdir -p "$cache"
    # Another run may have installed it meanwhile: keep whichever landed first.
    mv -T "$tmp/dist" "$cache/dist" 2>/dev/null || true
    rm -rf "$tmp"
    chmod 755 "$cache"
}

is_port() {
    [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ]
}

start() {
    local run="$1" front="$2"
    shift 2
    local port
    for port in "$front" "$@"; do
        is_port "$port" || { echo "scripts/haproxy.sh: not a port: $port" >&2; exit 2; }
    done
    install
    mkdir -p "$run"
    run="$(cd "$run" && pwd)"
    {
        cat <<CFG
# Written by scripts/haproxy.sh. No stats socket, no stats page.
global
    maxconn 2000
    # Without it a second haproxy could bind the same front port (SO_REUSEPORT) and share it.
    noreuseport

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s

frontend mcp_front
    bind 127.0.0.1:$front
    default_backend mcp_servers

backend mcp_servers
    balance roundrobin
    # A request whose connection never reached a server is sent again, to another server if its
    # own is down. Nothing else is retried: a POST a server received may have had effects.
    option redispatch
    retries 3
    retry-on conn-failure
    # Session affinity for protocol versions with server-side sessions: the server that issued
    # an Mcp-Session-Id gets every later request carrying it (while it is up).
    stick-table type string len 256 size 100k expire 30m
    stick store-response res.hdr(Mcp-Session-Id)
    stick match req.hdr(Mcp-Session-Id)
CFG
        local i=0
        for port in "$@"; do
            i=$((i + 1))
            echo "    server s$i 127.0.0.1:$port check inter 500ms fall 1 rise 2"
        done
    } >"$run/haproxy.cfg"
    if ! "$bin" -c -q -f "$run/haproxy.cfg" >"$run/haproxy.log" 2>&1; then
        cat "$run/haproxy.log" >&2
        echo "scripts/haproxy.sh: $run/haproxy.cfg is invalid" >&2
        exit 1
    fi
    # -D: haproxy forks into the background once it listens; a bind error fails this command.
    if ! "$bin" -D -p "$run/haproxy.pid" -f "$run/haproxy.cfg" >>"$run/haproxy.log" 2>&1; then
        cat "$run/haproxy.log" >&2
        echo "scripts/haproxy.sh: haproxy did not start on 127.0.0.1:$front" >&2
        exit 1
    fi
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$front") 2>/dev/null; then
            return
        fi
        sleep 0.1
    done
    cat "$run/haproxy.log" >&2
    echo "scripts/haproxy.sh: 127.0.0.1:$front did not accept connections within 10 s" >&2
    exit 1
}

stop() {
    local run="$1" pid
    if [ -f "$run/haproxy.pid" ]; then
        for pid in $(cat "$run/haproxy.pid"); do
            kill "$pid" 2>/dev/null || continue
            for _ in $(seq 1 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
        done
    fi
    rm -rf "$run"
}

case "${1:-}:${2:-}" in
install:)
    install
    echo "$bin"
    ;;
start:?*)
    [ $# -ge 4 ] || { echo "usage: scripts/haproxy.sh start RUN_DIR FRONT_PORT BACKEND_PORT..." >&2; exit 2; }
    start "$2" "$3" "${@:4}"
    ;;
stop:?*) stop "$2" ;;
*)
    echo "usage: scripts/haproxy.sh install | start RUN_DIR FRONT_PORT BACKEND_PORT... | stop RUN_DIR" >&2
    exit 2
    ;;
esac
