"""The platforms' console page: a platform's control plane and
infrastructure as text, and its name leading to its clusters."""
from html import unescape

from inventory.ui.platforms import control_plane_text, infrastructure_text
from tests.api.test_console_access import sign_in
from tests.conftest import ADMIN_TOKEN


def test_a_control_plane_reads_as_its_provider_and_kind():
    assert control_plane_text({"control_plane": {"provider": "eks"}}) == "eks"
    assert control_plane_text({"control_plane": {"provider": "kubeadm", "kind": "self"}}) \
        == "kubeadm (self)"
    assert control_plane_text({}) is None


def test_infrastructure_reads_as_its_fields_one_level_deep():
    record = {"infrastructure": {"cloud": {"provider": "aws", "region": "eu-west-1"},
                                 "rack": "r1"}}
    assert infrastructure_text(record) == "cloud.provider=aws cloud.region=eu-west-1 rack=r1"
    assert infrastructure_text({"infrastructure": None}) == ""


def test_a_platforms_name_leads_to_its_clusters(app, inventory):
    platform = inventory.platform(name="eks-one")["name"]
    inventory.cluster(platform, name="on-it")
    inventory.cluster(name="elsewhere")
    console = sign_in(app, ADMIN_TOKEN)
    text = unescape(console.get("/ui/platforms").get_data(as_text=True))
    link = text.split(">eks-one</a>", 1)[0].rsplit('href="', 1)[1].split('"', 1)[0]
    listed = console.get(link).get_data(as_text=True)
    assert "on-it" in listed and "elsewhere" not in listed
