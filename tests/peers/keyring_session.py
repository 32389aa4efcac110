"""Runs a command in a new Linux kernel session keyring of its own (keyctl JOIN_SESSION_KEYRING),
as a login session has one: the keychain tests run their checks, and the `umcp` processes they
start, inside it, so that they share its keys with each other and with nothing else.

Usage: python3 keyring_session.py COMMAND [ARGS...]
"""

import ctypes
import os
import sys

SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1

number = SYS_KEYCTL.get(os.uname().machine)
if number is None:
    sys.exit(f"keyring_session.py: no keyctl syscall number for {os.uname().machine}")
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
    sys.exit("keyring_session.py: cannot join a session keyring: " + os.strerror(ctypes.get_errno()))
os.environ["UMCP_KEYRING_SESSION"] = "1"
os.execvp(sys.argv[1], sys.argv[1:])
