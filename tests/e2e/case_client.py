#!/usr/bin/python3
"""case_client.py - a one-case test's command: hands the test to the warm server (case_server.py).

    case_client.py SOCKET SCRIPT [ARGS...]

Sends the server SCRIPT, ARGS, the working directory, the environment and this process's
stdin/stdout/stderr (SCM_RIGHTS), waits for the case's process, and exits as it did (its status,
or the same signal). Without a server at SOCKET, or with TC_E2E_NO_SERVER=1, it execs the script
itself. Imports nothing but built-in modules: it starts ~1100 times a suite, and `json`,
`socket` and what they import took 15 of its 24 ms (python3 -S alone: 9 ms).

The protocol (case_server.py reads it): a request is a 4-byte big-endian length, then NUL-separated
fields: "run", SCRIPT, the working directory, the count of ARGS, ARGS, then NAME=VALUE for
each environment variable (none of these can hold a NUL); the three descriptors go with it. The
reply is "status N" or "signal N".
"""
import os
import sys
from _socket import AF_UNIX, SCM_RIGHTS, SOCK_STREAM, SOL_SOCKET, socket

HERE = os.path.dirname(os.path.abspath(__file__))


def run_direct(script, args):
    os.execv(sys.executable, [sys.executable, "-B", os.path.join(HERE, script)] + args)


def request(op, script="", args=(), cwd="", env=()):
    fields = [op, script, cwd, str(len(args))] + list(args) + ["%s=%s" % kv for kv in env]
    data = b"\0".join(os.fsencode(f) for f in fields)
    return len(data).to_bytes(4, "big") + data


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    path, script, args = argv[0], argv[1], argv[2:]
    if os.environ.get("TC_E2E_NO_SERVER") == "1":
        run_direct(script, args)
    conn = socket(AF_UNIX, SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        run_direct(script, args)  # no server: the same test, in a process of its own
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    conn.sendmsg([request("run", script, args, os.getcwd(), os.environ.items())], [(SOL_SOCKET, SCM_RIGHTS, fds)])
    reply = b""
    try:
        while True:
            chunk = conn.recv(64)
            if not chunk:
                break
            reply += chunk
    except OSError as e:
        sys.stderr.write("case_client: the server lost this test (%s)\n" % e)
        return 1
    kind, _, number = reply.decode().partition(" ")
    if kind == "signal":
        import signal
        sys.stdout.flush()
        signal.signal(int(number), signal.SIG_DFL)
        os.kill(os.getpid(), int(number))  # die as the case's process did
    if kind != "status":
        sys.stderr.write("case_client: the server lost this test (no reply)\n")
        return 1
    return int(number)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
