"""A cluster, provisioned by a platform."""
from marshmallow import fields, validate

from inventory.ordering import CLUSTERS
from inventory.versions import VERSION_RE
from schemas.common import BodySchema, audit_fields, envelope, list_args, request_schema
from schemas.fields import Labels, Slug, Text


class KubeClusterSchema(BodySchema):
    """One Kubernetes cluster, provisioned by a platform."""

    SCHEMA_NAME = "KubeCluster"
    id = fields.String(dump_only=True, required=True,
                       metadata={"description": "`k8scl_` + a UUID, made by the server."})
    name = Slug(required=True, metadata={"description": "The cluster's slug, unique in the "
                                         "deployment; cannot be changed."})
    platform = Slug(required=True, metadata={"description": "Name of the provisioning "
                                             "platform; cannot be changed."})
    organization = fields.String(dump_only=True, required=True,
                                 metadata={"description": "The platform's organization."})
    environment = Text(63, min_length=1, required=True,
                       metadata={"description": "Customer-defined environment tag, e.g. `production`."})
    version = fields.String(
        required=True,
        validate=validate.Regexp(VERSION_RE, error="Must be a Kubernetes version such as "
                                 "1.31.2 or v1.31.2-eks-1234."),
        metadata={"description": "Control plane version.", "pattern": VERSION_RE.pattern,
                  "example": "v1.31.2-eks-1234"})
    title = Text(200, required=True, metadata={"description": "Display name; may be empty."})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; may be empty."})
    labels = Labels(required=True)
    last_scanned_on = fields.Integer(dump_only=True, required=True, allow_none=True,
                                     metadata={"description": "`scanned_on` of the newest "
                                               "scan; null before the first."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


KubeClusterCreateSchema = request_schema(
    KubeClusterSchema, "KubeClusterCreate",
    required=("name", "platform", "environment", "version"),
    defaults={"title": "", "description": "", "labels": dict})
KubeClusterPatchSchema = request_schema(
    KubeClusterSchema, "KubeClusterPatch", change=True, immutable=("name", "platform"),
    overrides={"labels": Labels(allow_null_values=True, metadata={
        "description": "Labels to set, key by key; a null value removes that label. "
                       "At most 64 remain."})})
KubeClusterListSchema = envelope("KubeClusterList", KubeClusterSchema)
KubeClusterListArgsSchema = list_args("KubeClusterList", [
    'environment="production" AND version<"1.30"', "labels:team", 'labels.team="core"',
    'version="1.31*"', "last_scanned_on<1763800000"], CLUSTERS)
