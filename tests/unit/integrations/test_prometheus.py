"""Prometheus' service discovery (inventory/integrations/prometheus.py):
a cluster's target group, its labels as Prometheus names them. (The list
through HTTP: tests/api/test_integrations.py.)"""
from inventory.integrations.prometheus import META, target, target_group


def test_a_target_is_the_api_servers_host_and_port():
    assert target("https://k8s.example:6443/") == "k8s.example:6443"
    assert target("https://k8s.example") == "k8s.example:443"
    assert target("https://[2001:db8::1]:6443") == "[2001:db8::1]:6443"


CLUSTER = {"name": "prod", "id": "k8scl_1", "organization": "org_1", "platform": "eks-1",
           "environment": "production", "version": "1.31.2", "support": {"status": "supported"},
           "endpoint": "https://k8s.example:6443",
           "labels": {"app_kubernetes_io/name": "second", "app.kubernetes.io/name": "first",
                      "team": "web"}}


def test_a_target_groups_labels():
    group = target_group(CLUSTER)
    assert group["targets"] == ["k8s.example:6443"]
    labels = group["labels"]
    assert labels[f"{META}cluster"] == "prod" and labels[f"{META}support_status"] == "supported"
    assert labels[f"{META}label_team"] == "web"
    # two keys, one Prometheus name: the first in code point order gives the value
    assert labels[f"{META}label_app_kubernetes_io_name"] == "first"
