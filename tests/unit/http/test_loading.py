"""Load plans (inventory.http.loading) against marshmallow itself: for a
valid body of each schema and for every body made from it by changing one
value anywhere (a null, a wrong type, a bound crossed, a key removed or
added), the planned schema answers exactly what marshmallow answers: the
same loaded value, or the same errors at the same places."""
import copy
import importlib
import json
import pkgutil

import pytest
from marshmallow import Schema, ValidationError, fields

import schemas
from inventory.cli.seed import typical_scan
from inventory.http.loading import plan_nested_loads


def _schemas_with_plans():
    found, seen = {}, set()
    for module in pkgutil.iter_modules(schemas.__path__):
        loaded = importlib.import_module(f"schemas.{module.name}")
        for name, value in vars(loaded).items():
            if isinstance(value, type) and issubclass(value, Schema) and value not in seen:
                seen.add(value)
                try:
                    planned = value()
                except TypeError:  # a schema that needs arguments
                    continue
                plan_nested_loads(planned)
                if any("_deserialize" in vars(f) for f in planned.load_fields.values()):
                    found[f"{module.name}.{name}"] = value
    return found


PLANNED = _schemas_with_plans()
SCAN = {"scanned_on": 1763800000, **typical_scan("1.30.4", 3)}
SEEDS = {
    "scans.KubeClusterScanCreateSchema": [SCAN, {**typical_scan("1.27.16", 7)}, {}],
    "platforms.KubePlatformCreateSchema": [{
        "name": "p", "organization": "org_x", "title": "P",
        "control_plane": {"provider": "eks", "region": "eu-west-1"},
        "infrastructure": {"cloud": {"provider": "aws", "region": "eu-west-1"}}}],
    "organizations.OrganizationCreateSchema": [{"title": "O", "quotas": {"clusters": 10}}],
}
ODD_VALUES = [None, "", "x", "x" * 300, "a\u0000b", "v1.30.4", "1.25", 0, -1, 7, 5.0, 5.5,
              2**60, 2**70, True, [], [{}], [None], {}, {"unknown": 1}, {"v1.30": 2},
              {"": 1}, {"k": None}]


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*path, index))


def _replaced(body, path, new):
    body = copy.deepcopy(body)
    if not path:
        return new
    holder = body
    for part in path[:-1]:
        holder = holder[part]
    if new is _REMOVED:
        del holder[path[-1]]
    else:
        holder[path[-1]] = new
    return body


_REMOVED = object()


def _variants(body):
    yield body
    for path in _paths(body):
        for value in ODD_VALUES:
            yield _replaced(body, path, value)
        if path and isinstance(path[-1], str):
            yield _replaced(body, path, _REMOVED)
    for path in _paths(body):  # a key no schema knows, in each object
        holder = body
        for part in path:
            holder = holder[part]
        if isinstance(holder, dict):
            yield _replaced(body, path, {**holder, "surplus": 1})


def _outcome(schema, body):
    try:
        return "loaded", json.dumps(schema.load(copy.deepcopy(body)), default=repr)
    except ValidationError as error:
        return "refused", json.dumps(error.messages, sort_keys=True, default=repr)


def test_the_scans_and_platforms_parts_are_planned():
    assert set(SEEDS) <= set(PLANNED)


@pytest.mark.parametrize("name", sorted(PLANNED))
def test_a_planned_schema_answers_every_body_as_marshmallow_does(name):
    cls = PLANNED[name]
    plain, planned = cls(), cls()
    plan_nested_loads(planned)
    compared = 0
    for seed in SEEDS.get(name, [{}]):
        for body in _variants(json.loads(json.dumps(seed))):
            assert _outcome(planned, body) == _outcome(plain, body), body
            compared += 1
    assert compared > (50 if name in SEEDS else 0)


def test_a_valid_scan_is_loaded_by_the_plans_alone(monkeypatch):
    """The plans do the work (no part falls back to marshmallow's Nested or
    List), so the scan's POST is spared marshmallow's per-field machinery."""
    schema = PLANNED["scans.KubeClusterScanCreateSchema"]()
    plan_nested_loads(schema)

    def refused(*_args, **_kwargs):
        raise AssertionError("marshmallow's own conversion ran")
    monkeypatch.setattr(fields.Nested, "_deserialize", refused)
    monkeypatch.setattr(fields.List, "_deserialize", refused)
    assert schema.load(SCAN)["nodes"]["kubelet_versions"] == SCAN["nodes"]["kubelet_versions"]
    # a bad part: the plan defers, and marshmallow (its conversion as it was
    # when planned) words the error at its place
    with pytest.raises(ValidationError) as refused_body:
        schema.load({**SCAN, "nodes": {**SCAN["nodes"], "count": -1}})
    assert list(refused_body.value.messages) == ["nodes"]
    assert list(refused_body.value.messages["nodes"]) == ["count"]
