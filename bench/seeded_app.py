"""The service as the Procfile runs it, on an embedded store seeded with
BENCH_N records per collection. The bench's writer token and the seeding's
duration go to BENCH_STATE_FILE (JSON). Served by gunicorn:
`gunicorn bench.seeded_app:app`."""
import json
import os
import time

from app import app  # the module's app, made from the environment as the Procfile's is
from bench.seeding import seed

_started = time.monotonic()
_secret = seed(app.extensions["inventory.store"], int(os.environ.get("BENCH_N", "100")))
with open(os.environ["BENCH_STATE_FILE"], "w") as state_file:
    json.dump({"token": _secret, "seeded_in": time.monotonic() - _started}, state_file)
