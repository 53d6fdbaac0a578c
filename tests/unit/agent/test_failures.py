"""The agent's failures by kind (inventory/agent/failures.py): one exit
code each, so that a CronJob's history tells them apart."""
from inventory.agent import failures


def test_each_kind_has_its_own_exit_code_and_name():
    kinds = [failures.Failure, failures.ConfigurationError, failures.ClusterError,
             failures.InventoryError]
    assert [kind.exit_code for kind in kinds] == [failures.INTERNAL, 2, 3, 4]
    assert len({kind.kind for kind in kinds}) == len(kinds)
    assert all(issubclass(kind, failures.Failure) for kind in kinds)


def test_a_cluster_error_keeps_the_api_servers_status():
    error = failures.ClusterError("forbidden", status=403)
    assert (str(error), error.status) == ("forbidden", 403)
    assert failures.ClusterError("unreachable").status is None
