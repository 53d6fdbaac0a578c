"""A platform: a cloud and control plane provider pairing of an organization."""
from marshmallow import Schema, fields, validate

from inventory.core.ids import ORGANIZATION_ID as ORG_ID
from schemas.common import BodySchema, audit_fields, envelope, request_schema
from schemas.fields import Slug, Text


class ControlPlaneSchema(Schema):
    provider = Text(63, min_length=1, required=True,
                    metadata={"description": "Control plane provider, e.g. `eks`, `gke`, "
                              "`aks`, `kubeadm`, `openshift`."})


class CloudSchema(Schema):
    provider = Text(63, min_length=1, required=True,
                    metadata={"description": "Cloud provider, e.g. `aws`, `gcp`, `azure`, `on-prem`."})


class InfrastructureSchema(Schema):
    cloud = fields.Nested(CloudSchema, required=True)


class KubePlatformSchema(BodySchema):
    """A cloud and control plane provider pairing owned by one organization."""

    SCHEMA_NAME = "KubePlatform"
    name = Slug(required=True, metadata={"description": "The platform's slug, unique in the "
                                         "deployment; cannot be changed."})
    organization = fields.String(required=True, validate=validate.Regexp(
        ORG_ID.pattern, error="Must be an organization id (org_ followed by a UUID)."), metadata={
        "description": "Id of the owning organization (`org_...`); cannot be changed.",
        "pattern": ORG_ID.pattern.pattern, "maxLength": ORG_ID.max_length})
    title = Text(200, required=True, metadata={"description": "Display name; may be empty."})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; may be empty."})
    control_plane = fields.Nested(ControlPlaneSchema, required=True)
    infrastructure = fields.Nested(InfrastructureSchema, required=True)
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


KubePlatformCreateSchema = request_schema(
    KubePlatformSchema, "KubePlatformCreate",
    required=("name", "organization", "control_plane", "infrastructure"),
    defaults={"title": "", "description": ""},
    example={"name": "eks-prod", "organization": "org_0192f4a0-0000-7000-8000-000000000000",
             "title": "EKS production", "control_plane": {"provider": "eks"},
             "infrastructure": {"cloud": {"provider": "aws"}}})
KubePlatformPatchSchema = request_schema(KubePlatformSchema, "KubePlatformPatch", change=True,
                                         immutable=("name", "organization", "control_plane"),
                                         example={"title": "EKS production (eu-west-1)"})
KubePlatformListSchema = envelope("KubePlatformList", KubePlatformSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = [
    'control_plane.provider="eks" AND infrastructure.cloud.provider="aws"',
    'organization="org_0192f4a0-0000-7000-8000-000000000000"', 'name="acme-*"']
