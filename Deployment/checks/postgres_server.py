"""A private PostgreSQL for a check or a benchmark, from Debian's `postgresql` package: `initdb` into a temporary
directory and `postgres` on 127.0.0.1 and a free port, never a system service. As root, the server runs as an
unprivileged user (`feedbackhost-test`, made with useradd when missing), since PostgreSQL refuses to run as root.
`stop()` ends it by its process id (SIGQUIT, then SIGKILL) and removes the directory."""

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

USER = "feedbackhost-test"


def _binaries():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if not found:
        raise SystemExit("postgres not found under /usr/lib/postgresql (Debian package postgresql; make test installs it)")
    return os.path.dirname(found[-1])


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    def __init__(self, fsync=False):
        """`fsync=False` (checks) trades durability across a power loss for speed; benchmarks keep the default."""
        self.binaries = _binaries()
        self.as_root = os.getuid() == 0
        self.user = USER if self.as_root else os.environ.get("USER", "postgres")
        self.directory = tempfile.mkdtemp(prefix="feedbackhost-pg-")
        if self.as_root:
            if subprocess.run(["id", "-u", USER], capture_output=True).returncode != 0:
                subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
                               check=True)
            shutil.chown(self.directory, USER)
        data = os.path.join(self.directory, "data")
        self._run(["initdb", "-D", data, "-A", "trust", "-U", self.user, "--no-sync", "-E", "UTF8", "--locale=C"])
        self.port = _free_port()
        options = ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"]
        if not fsync:
            options += ["-c", "fsync=off"]
        self.log = open(os.path.join(self.directory, "server.log"), "wb")
        self.process = subprocess.Popen(
            self._command(["postgres", "-D", data, "-p", str(self.port), "-k", self.directory] + options),
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while subprocess.run(self._command(["pg_isready", "-h", "127.0.0.1", "-p", str(self.port)]),
                             capture_output=True).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit("PostgreSQL did not start: see its log")
            time.sleep(0.05)

    def _command(self, arguments):
        path = [os.path.join(self.binaries, arguments[0])] + arguments[1:]
        if self.as_root:
            return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--"] + path
        return path

    def _run(self, arguments):
        subprocess.run(self._command(arguments), check=True, capture_output=True, timeout=60)

    def create_database(self, name):
        """A new database; returns its URL (no password: trust on loopback)."""
        self._run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", "postgres",
                   "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE DATABASE {name}"])
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{name}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
