"""A served `inventory.server.worker._Listener` under an open-files limit lower
than its connection cap, for tests/system/test_serving.py: each connection is held
for a second, then answered `ok`. Prints the port, then serves until killed."""
import logging
import resource
import sys

from gevent import monkey

monkey.patch_all()

import gevent  # noqa: E402
from gevent import socket  # noqa: E402

from inventory.server.worker import _Listener  # noqa: E402


class Stub:
    """What the listener needs of a worker."""
    max_connections = 10_000
    open_connections = 0
    log = logging.getLogger("stub")

    def handle(self, listener, client, addr):
        try:
            gevent.sleep(1)
            client.sendall(b"ok")
        finally:
            client.close()
            self.open_connections -= 1


logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1024)
server = _Listener(listener, Stub())
server.start()
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
print(listener.getsockname()[1], flush=True)
gevent.wait()
