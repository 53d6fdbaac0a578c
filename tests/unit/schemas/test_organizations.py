"""An organization's schemas (schemas/organizations.py): quotas of every
kind the resources count, bounded; a create with its defaults, a change of
some quotas only."""
import pytest
from marshmallow import ValidationError

from inventory.core.caps import DEFAULT_QUOTAS
from schemas.organizations import (
    MAX_QUOTA,
    OrganizationCreateSchema,
    OrganizationPatchSchema,
    QuotasChangeSchema,
    QuotasSchema,
)


def test_the_quotas_are_every_kind_the_resources_count_against():
    assert set(QuotasSchema().fields) == set(DEFAULT_QUOTAS)
    assert all(field.required for field in QuotasSchema().fields.values())
    assert not any(field.required for field in QuotasChangeSchema().fields.values())


def test_a_quota_is_a_whole_number_within_its_bounds():
    kind = next(iter(DEFAULT_QUOTAS))
    assert QuotasChangeSchema().load({kind: MAX_QUOTA}) == {kind: MAX_QUOTA}
    for bad in (-1, MAX_QUOTA + 1, 1.5, "3"):
        with pytest.raises(ValidationError):
            QuotasChangeSchema().load({kind: bad})


def test_a_create_needs_a_title_and_defaults_its_description():
    loaded = OrganizationCreateSchema().load({"title": "Acme"})
    assert loaded["title"] == "Acme" and loaded["description"] == ""
    with pytest.raises(ValidationError) as refused:
        OrganizationCreateSchema().load({"description": "no title"})
    assert "title" in refused.value.messages


def test_a_change_sets_some_quotas_and_leaves_the_rest():
    kind = next(iter(DEFAULT_QUOTAS))
    assert OrganizationPatchSchema().load({"quotas": {kind: 5}}) == {"quotas": {kind: 5}}
    for bad in ({"title": ""}, {"colour": "red"}):  # an empty title, an unknown field
        with pytest.raises(ValidationError):
            OrganizationPatchSchema().load(bad)
