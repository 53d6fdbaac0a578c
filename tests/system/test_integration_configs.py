"""The tool configurations docs/integrations.md shows, checked by the tools
themselves where they can be: Prometheus' `promtool` runs the page's HTTP SD
job against the served app and reports the relabelled targets; the Argo CD
manifests parse and refer to each other. promtool comes with Debian's
`prometheus` package (scripts/test --all installs it); without it that test
is skipped, saying so."""
import json
import re
import shutil
import subprocess

import pytest
import yaml

from tests.support.served import ROOT

pytestmark = pytest.mark.slow
PAGE = ROOT / "docs" / "integrations.md"
PROMTOOL = shutil.which("promtool")


def yaml_blocks():
    return [list(yaml.safe_load_all(block))
            for block in re.findall(r"```yaml\n(.*?)```", PAGE.read_text(), re.S)]


def test_the_argocd_manifests_refer_to_each_other():
    documents = [doc for block in yaml_blocks() for doc in block
                 if isinstance(doc, dict) and "kind" in doc]
    by_kind = {doc["kind"]: doc for doc in documents}
    secret, config_map = by_kind["Secret"], by_kind["ConfigMap"]
    application_set = by_kind["ApplicationSet"]
    assert secret["metadata"]["labels"]["app.kubernetes.io/part-of"] == "argocd"
    assert config_map["data"]["token"] == f"${secret['metadata']['name']}:token"
    assert config_map["data"]["baseUrl"].endswith("/integrations/argocd")
    (generator,) = application_set["spec"]["generators"]
    assert generator["plugin"]["configMapRef"]["name"] == config_map["metadata"]["name"]
    destination = application_set["spec"]["template"]["spec"]["destination"]
    assert destination["server"] == "{{.server}}"  # the parameter the generator answers


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian's prometheus)")
def test_promtool_runs_the_pages_discovery_against_the_service(client, inventory,
                                                               base_url, tmp_path):
    platform = inventory.platform()
    inventory.cluster(platform=platform["name"], name="payments", environment="production",
                      endpoint="https://api.payments.example.com:6443", labels={"team": "core"})
    inventory.cluster(platform=platform["name"], name="no-endpoint", environment="production")
    reader = client.post("/tokens", json={"name": "prometheus", "role": "reader"}).get_json()
    (config,) = [block[0] for block in yaml_blocks()
                 if isinstance(block[0], dict) and "scrape_configs" in block[0]]
    (job,) = config["scrape_configs"]
    sd = job["http_sd_configs"][0]
    sd["url"] = sd["url"].replace("https://inventory.example.com", base_url)
    token_file = tmp_path / "inventory-token"
    token_file.write_text(reader["token"])
    sd["authorization"]["credentials_file"] = str(token_file)
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))

    checked = subprocess.run([PROMTOOL, "check", "config", "--syntax-only", str(path)],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    found = subprocess.run([PROMTOOL, "check", "service-discovery", str(path), job["job_name"]],
                           capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stdout + found.stderr
    (target,) = json.loads(found.stdout)  # the cluster without an endpoint is left out
    labels = target["labels"]
    assert labels["__param_target"] == labels["instance"] == \
        "https://api.payments.example.com:6443"
    assert labels["__address__"] == "blackbox-exporter:9115"
    assert (labels["cluster"], labels["environment"], labels["label_team"]) == \
        ("payments", "production", "core")
    assert labels["support_status"] == target["discoveredLabels"][
        "__meta_inventory_support_status"]
