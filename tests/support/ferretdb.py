"""A FerretDB server of a test's own, started and stopped at will on one
port and one state directory (a database that goes away and comes back
with its data), as scripts/wire starts its own: the binary scripts/ferretdb
builds (once, into .cache/; it fails loudly without Go, so a test using
this is never skipped for want of it)."""
import os
import socket
import subprocess
import time

from tests.support.served import ROOT


def binary():
    """The FerretDB server's path, built first when missing."""
    return subprocess.run([str(ROOT / "scripts" / "ferretdb")], check=True, text=True,
                          stdout=subprocess.PIPE).stdout.strip()


class FerretDB:
    """FerretDB on SQLite in `state` (a directory), listening on `port` once started."""

    def __init__(self, state, port):
        self.state, self.port, self.process = str(state), port, None
        self.binary = binary()
        os.makedirs(self.state, exist_ok=True)

    @property
    def uri(self):
        return f"mongodb://127.0.0.1:{self.port}/inventory"

    def start(self, timeout=30):
        """Start it and wait until it accepts connections."""
        log = open(os.path.join(self.state, "ferretdb.log"), "a")  # noqa: SIM115 - the server's
        self.process = subprocess.Popen(
            [self.binary, "--handler=sqlite", f"--sqlite-url=file:{self.state}/",
             f"--listen-addr=127.0.0.1:{self.port}", f"--state-dir={self.state}",
             "--debug-addr=-", "--telemetry=disable", "--log-level=error"],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"FerretDB exited ({self.process.returncode}); its log is in "
                                   f"{self.state}/ferretdb.log")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"FerretDB did not listen on {self.port} within {timeout} s")

    def stop(self):
        """Stop it (the database is away; its data stays in `state`)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process = None
