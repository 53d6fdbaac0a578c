"""A fake MongoDB that speaks just enough of the wire protocol (OP_QUERY for
the legacy handshake, OP_MSG for commands) to answer `hello` and `ping`, so
that a test can make the database go away and come back. Loopback only."""
import socket
import struct
import threading

import bson

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
HELLO = {"ok": 1.0, "isWritablePrimary": True, "ismaster": True, "helloOk": True,
         "maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48_000_000,
         "maxWriteBatchSize": 100_000, "minWireVersion": 0, "maxWireVersion": 21,
         "logicalSessionTimeoutMinutes": 30, "connectionId": 1}


def _reply_to(command):
    name = next(iter(command), "").lower()
    return dict(HELLO) if name in ("hello", "ismaster") else {"ok": 1.0}


class FakeMongo:
    def __init__(self, port=0):
        self.port = port
        self._listener = None
        self._connections = []
        self._lock = threading.Lock()

    def start(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self):
        """Close the listener and every connection: the database is gone."""
        if self._listener is not None:
            try:  # wakes the thread blocked in accept(), which close() alone does not
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        with self._lock:
            for connection in self._connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                connection.close()
            self._connections.clear()

    def _accept(self, listener):
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    @staticmethod
    def _read(connection, size):
        data = b""
        while len(data) < size:
            chunk = connection.recv(size - len(data))
            if not chunk:
                raise ConnectionError
            data += chunk
        return data

    def _serve(self, connection):
        try:
            while True:
                length, request_id, _, opcode = struct.unpack("<iiii", self._read(connection, 16))
                body = self._read(connection, length - 16)
                if opcode == OP_QUERY:  # flags, "db.$cmd\0", skip, return, document
                    name_end = body.index(b"\0", 4)
                    command = bson.decode(body[name_end + 9:])
                    payload = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(_reply_to(command))
                    opcode_out = OP_REPLY
                else:  # OP_MSG: flags, then a kind-0 section holding the command
                    command = bson.decode(body[5:5 + struct.unpack("<i", body[5:9])[0]])
                    payload = struct.pack("<IB", 0, 0) + bson.encode(_reply_to(command))
                    opcode_out = OP_MSG
                header = struct.pack("<iiii", 16 + len(payload), 0, request_id, opcode_out)
                connection.sendall(header + payload)
        except (ConnectionError, OSError, ValueError):
            connection.close()
