#!/bin/sh
# Runs a command in a D-Bus session bus of its own with a GNOME Keyring Secret Service on it,
# its login keyring unlocked: the desktop keychain a Linux user has, for the keychain tests.
# HOME is a fresh temporary directory, where the keyring keeps its files, removed after.
#
# Usage: sh secret_service.sh COMMAND [ARGS...]
# Needs dbus-run-session and gnome-keyring-daemon (Debian: dbus, gnome-keyring).
set -eu
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
HOME="$home" UMCP_SECRET_SERVICE=1 dbus-run-session -- sh -c '
    printf "umcp-test\n" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    exec "$@"' sh "$@"
