"""What the agent's tests (tests/unit/agent/) share beside their fixtures:
the inventory the agent posts to (`FakeInventory`, on loopback; the
`inventory` fixture of tests/unit/agent/conftest.py serves one per test),
the agent run in this process (`agent`), and the one-line failure it ends
with (`failed`), by the exit codes docs/agent.md documents."""
import io
import json
import time
from http.server import BaseHTTPRequestHandler

from inventory.agent import NAME
from tests.support.kube_api import LoopbackServer, send, stream

# the exit codes of docs/agent.md ("Exit codes"), as the agent's users read them
CONFIGURATION, CLUSTER, INVENTORY = 2, 3, 4
SCAN_ID = "k8scs_0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


class FakeInventory(LoopbackServer):
    """The inventory's side: records each POST (path, headers, body) and
    answers as told, one answer per request (then 201 with a scan)."""

    def __init__(self):
        self.posts = []
        self.answers = []  # (status, headers, body) to answer next, in order
        self.delay = 0.0
        self.stream = None  # (status, content type, bytes made as sent): a hostile answer
        inventory = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                inventory.posts.append((self.path, {k.lower(): v for k, v in self.headers.items()},
                                        json.loads(body)))
                time.sleep(inventory.delay)
                if inventory.stream is not None:
                    stream(self, *inventory.stream)
                    return
                status, headers, answer = (inventory.answers.pop(0) if inventory.answers else
                                           (201, {}, {"id": SCAN_ID, "scanned_on": 1}))
                send(self, status, {"Content-Type": "application/json", **headers},
                     json.dumps(answer).encode())

            def log_message(self, *args):
                pass

        self.serve(Handler)


def agent(env, *argv):
    """Run the agent in this process: (exit code, stdout, stderr)."""
    from inventory.agent.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), env, out, err)
    return code, out.getvalue(), err.getvalue()


def failed(result, code, *words):
    """It failed with `code` and said so in one line holding `words`: that line."""
    exit_code, out, err = result
    assert exit_code == code, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"{NAME}: "), err
    for word in words:
        assert word in err, (word, err)
    return err
