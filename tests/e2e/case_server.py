#!/usr/bin/python3
"""case_server.py - runs the e2e corpus's one-case tests in processes forked from a warm one.

Each of the ~1100 one-case ctest tests (e2e.<backend>.<case>, e2e.<backend>.grad.<case>) used to
start Python, import NumPy and the corpus and load libtc: about 0.2 s before its case ran, more
than the case itself on most, and a fifth of the suite's time. Here a server does that once; a
test's command is a small client (no NumPy) that hands the server its argv, environment, working
directory and its own stdin/stdout/stderr (SCM_RIGHTS), and the server forks a process that runs
the script as its __main__ would run with those, writing straight to the test's output. So each
case still runs in a process of its own (a crash, a leak or a hang is that case's alone) and a
test's output and exit status (a signal included) are what running the script gives.

    case_server.py start SOCKET     start a server (a daemon) and return once it answers
    case_server.py stop SOCKET      stop it

A test's command is case_client.py SOCKET SCRIPT [ARGS...] (the protocol is described there):
without a server, or with TC_E2E_NO_SERVER=1, it execs the script directly.

ctest's fixture tc_case_server starts and stops it (tests/e2e/CMakeLists.txt). The server exits
by itself after 15 idle minutes (an interrupted ctest run leaves none for long). What it does
not do: share anything between cases beyond the imports (each fork starts from the state after
them; libtc is loaded but unused then, so no libtc thread exists at a fork).
"""
import os
import select
import signal
import socket
import sys
import time

from case_client import request

HERE = os.path.dirname(os.path.abspath(__file__))
IDLE_SECONDS = 900
# The scripts whose one-case tests come here; imported (and compiled) once by the server.
SCRIPTS = ("run_corpus.py", "gradients.py")


def recv_request(conn):
    """A request (case_client.py's format) as a dict, and the descriptors sent with it."""
    data, fds = b"", []
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk, more, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        if not chunk:
            raise EOFError("connection closed")
        data += chunk
        fds += more
    fields = [os.fsdecode(f) for f in data[4:].split(b"\0")]
    argc = int(fields[3])
    env = dict(f.partition("=")[::2] for f in fields[4 + argc:])
    return {"op": fields[0], "script": fields[1], "cwd": fields[2], "argv": fields[4:4 + argc], "env": env}, fds


# ---- server --------------------------------------------------------------------------------------

def preload():
    """The imports every case makes, and the scripts' code compiled once."""
    sys.path.insert(0, HERE)
    import numpy  # noqa: F401
    import corpus  # noqa: F401
    import run_corpus  # noqa: F401
    import gradients  # noqa: F401
    import tclib
    tclib.lib()  # loads libtc (no thread starts until a call needs one)
    code = {}
    for name in SCRIPTS:
        path = os.path.join(HERE, name)
        with open(path) as f:
            code[name] = compile(f.read(), path, "exec")
    return code


def run_case(request, fds, code):
    """In the forked process: becomes the test's process and runs its script; never returns."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setpgid(0, 0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        script = request["script"]
        sys.argv = [os.path.join(HERE, script)] + request["argv"]
        globs = {"__name__": "__main__", "__file__": sys.argv[0], "__builtins__": __builtins__}
        try:
            exec(code[script], globs)
            status = 0
        except SystemExit as e:  # as the interpreter would: None is 0, a message is 1
            if e.code is None or isinstance(e.code, int):
                status = e.code or 0
            else:
                sys.stderr.write("%s\n" % e.code)
                status = 1
    except BaseException:
        import traceback
        traceback.print_exc()
        status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def handle(conn, code):
    """In a forked handler: runs the case in a child and reports its exit status; kills the
    case if the client goes away (ctest's timeout)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    req, fds = recv_request(conn)
    if req["op"] == "stop":
        os.kill(os.getppid(), signal.SIGTERM)
        os._exit(0)
    if req["op"] != "run" or req["script"] not in code or len(fds) != 3:
        conn.sendall(b"status 2")
        sys.stderr.write("case_server: bad request %r\n" % req["script"])
        os._exit(0)
    pid = os.fork()
    if pid == 0:
        conn.close()
        run_case(req, fds, code)
    for fd in fds:
        os.close(fd)
    # Woken by the case's end (its pidfd) or by the client's (ctest's timeout), not by a timer:
    # a poll every 20 ms kept each test's slot ~10 ms longer than its case ran.
    pidfd = os.pidfd_open(pid)
    while True:
        readable, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in readable:
            break
        if not conn.recv(1):  # the client is gone: so is its case
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            os._exit(0)
    _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        reply = "signal %d" % os.WTERMSIG(wait_status)
    else:
        reply = "status %d" % os.WEXITSTATUS(wait_status)
    try:
        conn.sendall(reply.encode())
    except OSError:
        pass
    os._exit(0)


def serve(path, ready_fd):
    code = preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    os.write(ready_fd, b"ready")
    os.close(ready_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped by the kernel
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    last = time.time()

    def serve_one():
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            try:
                handle(conn, code)
            finally:
                os._exit(1)
        conn.close()

    while not stopping and time.time() - last < IDLE_SECONDS:
        try:
            readable, _, _ = select.select([listener], [], [], 1.0)
        except InterruptedError:
            continue
        if readable:
            serve_one()
            last = time.time()
    # The path goes first, so that a client arriving now finds no server and runs its script
    # itself; one that connected before is still served (none is left unanswered).
    try:
        os.unlink(path)
    except OSError:
        pass
    while select.select([listener], [], [], 0)[0]:
        serve_one()
    listener.close()


def start(path):
    """Starts a daemon serving `path`; returns once it listens (exit 1 if it failed)."""
    stop(path, quiet=True)
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        os.close(read_end)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        log = os.open(path + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        try:
            serve(path, write_end)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(0)
    os.close(write_end)
    ok = os.read(read_end, 5) == b"ready"
    if not ok:
        sys.stderr.write("case_server: the server did not start; see %s.log\n" % path)
        return 1
    print("case_server: serving %s (log %s.log; exits after %d idle seconds)" % (path, path, IDLE_SECONDS))
    return 0


def stop(path, quiet=False):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        conn.sendall(request("stop"))
        conn.close()
    except OSError:
        if not quiet:
            print("case_server: no server at %s" % path)
        return 0
    for _ in range(100):  # it unlinks its socket on the way out
        if not os.path.exists(path):
            break
        time.sleep(0.05)
    if not quiet:
        print("case_server: stopped %s" % path)
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "start":
        return start(argv[1])
    if len(argv) >= 2 and argv[0] == "stop":
        return stop(argv[1])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
