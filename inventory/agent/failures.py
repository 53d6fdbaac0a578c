"""What can go wrong, by kind: each kind is one exit code, so that a
CronJob's history (or a script) tells a bad configuration from a cluster
that refused the agent from an inventory that did (docs/agent.md, "Exit
codes"). The message is one line, said by `cli`."""

INTERNAL = 1  # a bug in the agent: an exception nothing here expected


class Failure(Exception):
    """A failure the agent explains in one line and exits with `exit_code`."""

    exit_code = INTERNAL
    kind = "internal error"


class ConfigurationError(Failure):
    """The agent's own settings are missing or wrong (the environment, the
    flags, the kubeconfig or the in-cluster service account)."""

    exit_code = 2
    kind = "configuration"


class ClusterError(Failure):
    """The cluster's API server could not be reached, or refused a read."""

    exit_code = 3
    kind = "cluster"

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status  # the API server's HTTP status, when it answered


class InventoryError(Failure):
    """The inventory could not be reached, or refused the scan."""

    exit_code = 4
    kind = "inventory"
