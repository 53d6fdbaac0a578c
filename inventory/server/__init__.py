"""The serving model: gunicorn's gevent worker with a deadline on every read and write."""
