"""A rollout's schemas (schemas/rollouts.py): the target a minor version;
a stage's soak an ISO 8601 duration up to 30 days, PT0S and no approval
when absent; 1 to MAX_STAGES stages with distinct names (each duplicate
said at its index); a create's defaults; a change cannot alter the name,
organization or target; an approval names a stage."""
import pytest
from marshmallow import ValidationError

from inventory.core.rollouts import MAX_STAGES
from schemas.rollouts import (
    RolloutApproveSchema,
    RolloutClusterListArgsSchema,
    RolloutCreateSchema,
    RolloutPatchSchema,
)


def _create(**fields):
    return RolloutCreateSchema().load({"name": "wave", "target": "1.32",
                                       "stages": [{"name": "all", "filter": ""}], **fields})


def _refused(schema, body):
    with pytest.raises(ValidationError) as refused:
        schema.load(body)
    return refused.value.messages


def test_a_create_has_its_defaults_and_each_stage_its_own():
    assert _create() == {"name": "wave", "target": "1.32", "title": "", "description": "",
                         "organization": None, "paused": False,
                         "stages": [{"name": "all", "filter": "", "soak": "PT0S",
                                     "approval": False}]}


@pytest.mark.parametrize("target", ["1.32", "1.9", "0.1", "2.0"])
def test_a_target_is_a_minor_version(target):
    assert _create(target=target)["target"] == target


@pytest.mark.parametrize("target", ["1.32.0", "v1.32", "1", "01.32", "1.x", ""])
def test_anything_else_is_not_a_target(target):
    assert _refused(RolloutCreateSchema(), {"name": "w", "target": target, "stages": [
        {"name": "all", "filter": ""}]})["target"] == ["Must be a minor version, such as 1.32."]


@pytest.mark.parametrize("soak", ["PT0S", "PT12H", "P2D", "P1W", "P30D", "P1DT2H30M"])
def test_a_soak_is_a_duration_up_to_30_days(soak):
    assert _create(stages=[{"name": "all", "filter": "", "soak": soak}])["stages"][0][
        "soak"] == soak


@pytest.mark.parametrize("soak", ["P31D", "P5W", "2h", "P", "PT", "P1M", "-PT1H", ""])
def test_anything_else_is_not_a_soak(soak):
    messages = _refused(RolloutCreateSchema(), {"name": "w", "target": "1.32", "stages": [
        {"name": "all", "filter": "", "soak": soak}]})
    assert "soak" in messages["stages"][0]


def test_one_to_max_stages_stages_with_distinct_names():
    many = [{"name": f"s{index}", "filter": ""} for index in range(MAX_STAGES)]
    assert len(_create(stages=many)["stages"]) == MAX_STAGES
    assert "stages" in _refused(RolloutCreateSchema(), {
        "name": "w", "target": "1.32", "stages": [*many, {"name": "more", "filter": ""}]})
    assert "stages" in _refused(RolloutCreateSchema(), {"name": "w", "target": "1.32",
                                                        "stages": []})
    messages = _refused(RolloutCreateSchema(), {"name": "w", "target": "1.32", "stages": [
        {"name": "a", "filter": ""}, {"name": "b", "filter": ""}, {"name": "a", "filter": ""}]})
    assert messages == {"stages": [{2: {"name": [
        "Another stage of the rollout has this name."]}}]}


def test_a_change_requires_nothing_and_takes_the_immutable_fields_as_they_are():
    assert RolloutPatchSchema().load({"paused": True}) == {"paused": True}
    assert RolloutPatchSchema().load({"target": "1.32"}) == {"target": "1.32"}
    assert "target" in _refused(RolloutPatchSchema(), {"target": "1.32.1"})
    assert "paused" in _refused(RolloutPatchSchema(), {"paused": "yes"})


def test_an_approval_names_a_stage_and_nothing_else():
    assert RolloutApproveSchema().load({"stage": "canary"}) == {"stage": "canary"}
    assert "stage" in _refused(RolloutApproveSchema(), {})
    assert "stage" in _refused(RolloutApproveSchema(), {"stage": "Not_A_Slug"})
    assert "schema_url" not in RolloutApproveSchema().fields


def test_the_clusters_list_arguments_are_bounded():
    args = RolloutClusterListArgsSchema()
    assert args.load({"filter": 'state="blocked"', "limit": "10"}) == {
        "filter": 'state="blocked"', "limit": 10}
    assert "limit" in _refused(args, {"limit": "1000"})
