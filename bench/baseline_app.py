"""The baseline: bare Flask answering the bench's routes with precomputed
bodies (the service's own answers, captured once), under the same gunicorn
settings. What the service costs beyond this is the service's own work."""
import json
import os

from flask import Flask, Response, request

with open(os.environ["BENCH_BODIES"]) as bodies_file:
    BODIES = json.load(bodies_file)  # "METHOD path?query" -> [status, body]

app = Flask(__name__)


def _answer(path):
    key = f"{request.method} {path}"
    if request.query_string:
        key += "?" + request.query_string.decode()
    status, body = BODIES[key]
    return Response(body, status=status, mimetype="application/json")


@app.route("/kubeclusters", methods=["GET"])
def clusters():
    return _answer("/kubeclusters")


@app.route("/kubeplatforms", methods=["GET"])
def platforms():
    return _answer("/kubeplatforms")


@app.route("/kubeplatforms/<name>", methods=["GET"])
def platform(name):
    return _answer(f"/kubeplatforms/{name}")


@app.route("/kubeclusters/<key>", methods=["GET"])
def cluster(key):
    return _answer(f"/kubeclusters/{key}")


@app.route("/kubeclusters/<key>/scans", methods=["POST"])
def scan(key):
    request.get_data()
    return _answer(f"/kubeclusters/{key}/scans")


@app.route("/healthz")
def health():
    return {"status": "ok"}
