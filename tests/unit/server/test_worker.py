"""The worker's look at a stream's socket (inventory.server.worker):
whether its client went away, without waiting and without taking what the
client sent."""
import socket
import time


def test_a_client_is_gone_once_it_closes_and_not_before(stream_connection):
    server_side, client_side = socket.socketpair()
    connection = stream_connection(server_side, keepalive=2)
    try:
        began = time.monotonic()
        assert connection.client_gone() is False  # nothing to read: no wait for it
        assert time.monotonic() - began < 0.1
        client_side.sendall(b"GET / HTTP/1.1\r\n")  # what it sends stays to be read
        assert connection.client_gone() is False
        assert server_side.recv(64) == b"GET / HTTP/1.1\r\n"
        client_side.close()
        assert connection.client_gone() is True
    finally:
        server_side.close()


def test_a_broken_connection_is_gone(stream_connection):
    server_side, client_side = socket.socketpair()
    connection = stream_connection(server_side, keepalive=2)
    server_side.close()  # any error of the socket: nobody to answer
    try:
        assert connection.client_gone() is True
    finally:
        client_side.close()
