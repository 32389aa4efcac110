#!/usr/bin/env bash
# Installs the pinned MCP peer servers of the interop tests under <target dir>/peers:
#   npm  @modelcontextprotocol/server-everything and @modelcontextprotocol/server (the TypeScript
#        SDK v2, for tests/peers/ts_v2_server.mjs), `npm ci` from tests/peers/package-lock.json
#        into target/peers/npm
#   py   a venv at target/peers/py with the pins of tests/peers/requirements.txt (mcp 2.3.0)
#   auth a venv at target/peers/auth with the pins of tests/peers/requirements-auth.txt: Authlib
#        and Flask for the authorization server of tests/peers/oauth_peer.py, and mcp 2.3.0
#   net  a venv at target/peers/net with the pins of tests/peers/requirements-network.txt
#        (mitmproxy 11.0.2 and trustme, for the network tests)
#   hosts  the hosts umcp bridge is tested with and mcp-remote, `npm ci` from
#        cli/tests/peers/package-lock.json into target/peers/hosts
#
# Usage: bash tests/peers/install.sh [npm|py|auth|net|hosts|all]     (default: all)
#
# The tests install these themselves on first use (test-support/src/peers.rs); this script is the
# same install for CI and for doing it by hand. Both follow one contract: an install is built
# in a temporary folder, gets a `.umcp-stamp` file holding a copy of the lock or requirements
# file, and is then renamed into place; an install whose stamp matches is reused.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
peers="$target/peers"
mkdir -p "$peers"

# install_into <name> <pin file> <function that fills the folder given as $1>
install_into() {
    local name="$1" pins="$2" fill="$3"
    local dest="$peers/$name" staging="$peers/.$name.tmp-$$"
    if cmp -s "$pins" "$dest/.umcp-stamp"; then
        echo "$name: up to date in $dest"
        return 0
    fi
    rm -rf "$staging"
    mkdir -p "$staging"
    if ! "$fill" "$staging"; then
        rm -rf "$staging"
        echo "$name: install failed" >&2
        return 1
    fi
    cp "$pins" "$staging/.umcp-stamp"
    rm -rf "$dest"
    mv "$staging" "$dest"
    echo "$name: installed in $dest"
}

# The fill functions run as an `if` condition, where `set -e` does not apply: every step
# returns on failure explicitly.
fill_npm() {
    local dir="$1" version
    version="$(node --version)" || { echo "Node.js is not on PATH" >&2; return 1; }
    if [ "$(echo "$version" | sed 's/^v//; s/\..*//')" -lt 20 ]; then
        echo "Node.js 20 or newer is needed, found $version" >&2
        return 1
    fi
    cp "$root/tests/peers/package.json" "$root/tests/peers/package-lock.json" "$dir/" || return 1
    npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts || return 1
    test -f "$dir/node_modules/@modelcontextprotocol/server/package.json" || return 1
    test -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
}

fill_hosts() {
    local dir="$1"
    cp "$root/cli/tests/peers/package.json" "$root/cli/tests/peers/package-lock.json" "$dir/" || return 1
    npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts || return 1
    test -f "$dir/node_modules/mcp-remote/dist/proxy.js"
}

fill_py() {
    local dir="$1"
    python3 -m venv "$dir" || return 1
    "$dir/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
        -r "$root/tests/peers/requirements.txt" || return 1
    "$dir/bin/python" -c 'import mcp.server.mcpserver'
}

fill_auth() {
    local dir="$1"
    python3 -m venv "$dir" || return 1
    "$dir/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
        -r "$root/tests/peers/requirements-auth.txt" || return 1
    "$dir/bin/python" -c 'import authlib.oauth2.rfc8628, flask, mcp.server.mcpserver'
}

fill_net() {
    local dir="$1"
    python3 -m venv "$dir" || return 1
    "$dir/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
        -r "$root/tests/peers/requirements-network.txt" || return 1
    "$dir/bin/python" -c 'import mitmproxy, trustme' && test -x "$dir/bin/mitmdump"
}

what="${1:-all}"
case "$what" in
    npm) install_into npm "$root/tests/peers/package-lock.json" fill_npm ;;
    py) install_into py "$root/tests/peers/requirements.txt" fill_py ;;
    auth) install_into auth "$root/tests/peers/requirements-auth.txt" fill_auth ;;
    net) install_into net "$root/tests/peers/requirements-network.txt" fill_net ;;
    hosts) install_into hosts "$root/cli/tests/peers/package-lock.json" fill_hosts ;;
    all)
        install_into npm "$root/tests/peers/package-lock.json" fill_npm
        install_into py "$root/tests/peers/requirements.txt" fill_py
        install_into auth "$root/tests/peers/requirements-auth.txt" fill_auth
        install_into net "$root/tests/peers/requirements-network.txt" fill_net
        install_into hosts "$root/cli/tests/peers/package-lock.json" fill_hosts
        ;;
    *)
        echo "usage: $0 [npm|py|auth|net|hosts|all]" >&2
        exit 2
        ;;
esac
