"""A webhook receiver on loopback for tests: records what it is sent, and
answers as told (a status, slowly, never, or with a redirect)."""
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self):
        self.received = []  # (headers as a dict, body bytes), in arrival order
        self.answers = []  # statuses to answer next, one per request; then 204
        self.delay = 0.0  # seconds before answering
        self.black_hole = False  # read the request, never answer
        self.redirect_to = None
        self.on_receive = None  # called with (headers, body) before answering
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.received.append(({k.lower(): v for k, v in self.headers.items()},
                                              body))
                    status = receiver.answers.pop(0) if receiver.answers else 204
                if receiver.on_receive is not None:
                    receiver.on_receive(receiver.received[-1][0], body)
                if receiver.black_hole:
                    time.sleep(30)
                    return
                time.sleep(receiver.delay)
                self.send_response(302 if receiver.redirect_to else status)
                if receiver.redirect_to:
                    self.send_header("Location", receiver.redirect_to)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
