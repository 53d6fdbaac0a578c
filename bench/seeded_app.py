"""The service as the Procfile runs it, on an embedded store seeded with
BENCH_N records per collection; the bench's writer token goes to
BENCH_TOKEN_FILE. Served by gunicorn: `gunicorn bench.seeded_app:app`."""
import os

from app import create_app
from bench.seeding import seed
from inventory.config import Config

app = create_app(Config())
_secret = seed(app.extensions["inventory.store"], int(os.environ.get("BENCH_N", "100")))
with open(os.environ["BENCH_TOKEN_FILE"], "w") as token_file:
    token_file.write(_secret)
