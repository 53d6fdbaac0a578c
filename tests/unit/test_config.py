"""Settings are read from the environment in inventory/config.py only, each
declared once (docs/configuration.md's table is made from the declarations;
tests/system/test_docs_site.py fails when it is stale)."""
import ast
import pathlib

import pytest

from inventory.config import SETTINGS, Config, flag

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _environment_reads(path):
    """How many times the module at `path` names os.environ or os.getenv,
    but to hand the whole environment, unread, to a child process (an
    argument of its own: the journal's merge)."""
    reads = 0
    tree = ast.parse(path.read_text())
    handed = {id(argument) for node in ast.walk(tree) if isinstance(node, ast.Call)
              for argument in node.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") \
                and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and not (node.attr == "environ" and id(node) in handed):
            reads += 1
        if isinstance(node, ast.ImportFrom) and node.module == "os" \
                and any(alias.name in ("environ", "getenv") for alias in node.names):
            reads += 1
    return reads


def test_no_module_but_the_config_reads_the_environment():
    """A setting read anywhere else would be missing from the manual's table."""
    # (the scanning agent and the ClusterProfile syncer are clients of the
    # service, not the service: their own variables are documented with
    # them, docs/agent.md and docs/clusterprofiles.md)
    files = [*(path for path in (ROOT / "inventory").rglob("*.py")
               if not {"agent", "clusterprofiles"} & set(path.relative_to(ROOT / "inventory").parts)),
             *(ROOT / "schemas").rglob("*.py"), ROOT / "app.py", ROOT / "gunicorn.conf.py"]
    readers = {str(path.relative_to(ROOT)): _environment_reads(path) for path in files}
    # and in config.py once: Config hands os.environ to the Settings, which
    # read their own variables; a variable read beside them would be undeclared
    assert {path: reads for path, reads in readers.items() if reads} == {"inventory/config.py": 1}


def _other_text(setting):
    """A value of the variable that must change what Config holds."""
    if setting.read is flag:
        return "0" if setting.default else "1"
    if isinstance(setting.default, int):
        return str(setting.default + 7)
    if setting.name == "INVENTORY_FSYNC":
        return "always"
    return "other.example"


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: setting.name)
def test_each_setting_is_read_from_its_variable_and_described(setting):
    attribute = setting.attribute or setting.name
    default = getattr(Config({}), attribute)
    assert default == setting.default
    assert getattr(Config({setting.name: _other_text(setting)}), attribute) != default
    assert getattr(Config({setting.name: ""}), attribute) == (
        False if setting.read is flag else default)  # an empty flag is off, else the default
    assert len(setting.meaning) > 20 and setting.meaning.endswith((".", ")"))


def test_the_names_are_declared_once():
    names = [setting.name for setting in SETTINGS]
    assert len(names) == len(set(names))
    attributes = [setting.attribute or setting.name for setting in SETTINGS]
    assert len(attributes) == len(set(attributes))


def test_overrides_win_over_the_environment():
    assert Config({"RATE_LIMIT": "5 per second"}, RATE_LIMIT="9 per hour").RATE_LIMIT == \
        "9 per hour"


def test_the_deployment_files_set_only_declared_settings():
    """app.json (a PaaS's form), compose.yaml and the Procfile name settings
    that exist: a renamed or made-up one would be silently ignored."""
    import json
    import re

    import yaml

    names = {setting.name for setting in SETTINGS}
    app_json = set(json.loads((ROOT / "app.json").read_text())["env"])
    compose = set(yaml.safe_load((ROOT / "compose.yaml").read_text())
                  ["services"]["inventory"]["environment"])
    procfile = set(re.findall(r"\b([A-Z][A-Z0-9_]+)=", (ROOT / "Procfile").read_text()))
    assert app_json and compose and procfile
    assert (app_json | compose | procfile) - names == set()
