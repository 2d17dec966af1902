"""redis_server.py - a real Debian redis-server for the remote cache tier's Python tests and
bench/remote_cache.py: started on a free loopback port with a directory of the caller's (no
persistence: a restart starts empty), killed (SIGKILL, as a crash would) by kill(); and
redis-cli for one command. The C++ tests have tests/common/redis_server.h."""
import os
import signal
import socket
import subprocess
import time


def free_port():
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """redis-server on a loopback port; start() again restarts it (empty) on the same port."""

    def __init__(self, workdir):
        self.dir, self.port, self.proc = workdir, free_port(), None
        self.url = "redis://127.0.0.1:%d" % self.port
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", "--appendonly", "no", "--logfile", os.path.join(self.dir, "redis.log")])
        deadline = time.monotonic() + 60  # a hang guard: it answers in milliseconds
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.1).close()
                return
            except OSError:
                time.sleep(0.025)
        raise RuntimeError("redis-server on port %d does not answer in 60 s" % self.port)

    def kill(self):
        if self.proc:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def cli(self, *args):
        """redis-cli's output for one command."""
        r = subprocess.run(["redis-cli", "-p", str(self.port)] + list(args), capture_output=True, text=True)
        return r.stdout.strip()


def write_key(path, secret="a secret of at least sixteen bytes"):
    """A key file for cache.remote_key: mode 0600 from its creation."""
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(secret + "\n")
    return path
