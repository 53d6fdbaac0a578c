"""marshmallow schemas: the shape and validation of every body and argument."""
from marshmallow import fields, validate

from inventory.versions import VERSION_RE
from schemas.common import BodySchema, audit_fields, envelope
from schemas.fields import Labels, Slug, Text


class KubeClusterSchema(BodySchema):
    """One Kubernetes cluster, provisioned by a platform."""

    SCHEMA_NAME = "KubeCluster"
    id = fields.String(dump_only=True, metadata={"description": "`k8scl_` + a UUID, made by the server."})
    name = Slug(required=True, metadata={"description": "The cluster's slug, unique in the "
                                         "deployment; cannot be changed."})
    platform = Slug(required=True, metadata={"description": "Name of the provisioning "
                                             "platform; cannot be changed."})
    organization = fields.String(dump_only=True, metadata={"description": "The platform's organization."})
    environment = Text(63, min_length=1, required=True,
                       metadata={"description": "Customer-defined environment tag, e.g. `production`."})
    version = fields.String(
        required=True,
        validate=validate.Regexp(VERSION_RE, error="Must be a Kubernetes version such as "
                                 "1.31.2 or v1.31.2-eks-1234."),
        metadata={"description": "Control plane version.", "pattern": VERSION_RE.pattern,
                  "example": "v1.31.2-eks-1234"})
    title = Text(200, load_default="")
    description = Text(2000, multiline=True, load_default="")
    labels = Labels(load_default=dict)
    last_scanned_on = fields.Integer(dump_only=True, allow_none=True, dump_default=None,
                                     metadata={"description": "`scanned_on` of the newest scan."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


class KubeClusterPatchSchema(KubeClusterSchema):
    """Fields to change; `labels` merge key by key, and a null value removes a label."""

    labels = Labels(allow_null_values=True)

    def __init__(self, **kwargs):
        super().__init__(partial=True, **kwargs)


KubeClusterListSchema = envelope("KubeClusterList", KubeClusterSchema)
