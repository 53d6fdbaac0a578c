"""The scanning agent: `python -m inventory.agent` reads a cluster through
the Kubernetes API and posts one scan of it to the inventory.

It is a client of the service, not part of it: it imports nothing of the
service and talks to it over HTTP only (pyproject.toml's import contracts
keep it so), and its dependencies are in requirements-agent.txt, not the
service's requirements.txt. docs/agent.md is its manual.

- `failures`: the kinds of failure and their exit codes
- `bounds`: the run's deadline, an answer's time, and the caps on what is read
- `redaction`: what is printed of others' text (no credential, one line)
- `cluster`: what it reads from the cluster, with the official Kubernetes client
- `scan`: the scan body, made from what was read (no I/O)
- `posting`: the one POST to the inventory, retried with the same key
- `cli`: the command line: configuration, the run, one line per failure
"""
NAME = "inventory-agent"
VERSION = "1.0.0"
