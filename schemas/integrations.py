"""The integrations' bodies, as Argo CD's plugin generator and Prometheus' discovery define them."""
import re

from marshmallow import EXCLUDE, Schema, fields, validate

from inventory.core.caps import MAX_INTEGRATION_CLUSTERS
from inventory.core.filtering import MAX_LENGTH as MAX_FILTER
from schemas.common import FILTER_DESCRIPTION, BodySchema
from schemas.fields import Slug

# an ApplicationSet's name: a Kubernetes object name (a DNS subdomain)
_K8S_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_FILTER = {"description": FILTER_DESCRIPTION.split("A filtered page")[0].strip(),
           "examples": ['environment="production"', "labels:team"]}


class ArgoCDParametersSchema(Schema):
    class Meta:
        unknown = EXCLUDE  # the ApplicationSet's other parameters are its own business

    filter = fields.String(validate=validate.Length(max=MAX_FILTER), metadata=_FILTER)
    rollout = Slug(metadata={"description": "A rollout's name: then only the clusters that "
                             "may upgrade now (of its open stages, `ready`), each with its "
                             "`stage`."})


class ArgoCDInputSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    # Argo CD's Go map: `null` when the ApplicationSet gives no parameters
    parameters = fields.Nested(ArgoCDParametersSchema, load_default=dict, allow_none=True)


class ArgoCDGetParamsRequestSchema(BodySchema):
    """What Argo CD's plugin generator sends."""

    SCHEMA_NAME = "ArgoCDGetParamsRequest"
    EXAMPLE = {"applicationSetName": "fleet-monitoring",
               "input": {"parameters": {"filter": 'environment="production"'}}}

    class Meta:
        unknown = EXCLUDE  # fields a later Argo CD adds
        exclude = ("schema_url",)  # a request: it names no schema of its own

    applicationSetName = fields.String(
        required=True, validate=validate.Regexp(_K8S_NAME, error="Must be a Kubernetes name."),
        metadata={"description": "The ApplicationSet asking.", "pattern": _K8S_NAME.pattern,
                  "maxLength": 253})
    input = fields.Nested(ArgoCDInputSchema, required=True, metadata={
        "description": "`parameters.filter` is the clusters' filter; `parameters.rollout` "
                       "a rollout's name (the clusters it lets upgrade now); other parameters "
                       "are ignored."})


class ArgoCDClusterParametersSchema(Schema):
    name = fields.String(required=True)
    id = fields.String(required=True)
    organization = fields.String(required=True)
    platform = fields.String(required=True)
    environment = fields.String(required=True)
    version = fields.String(required=True)
    minor = fields.String(required=True, metadata={"examples": ["1.31"]})
    support_status = fields.String(required=True)
    labels = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    server = fields.String(required=True, allow_none=True, metadata={
        "description": "The cluster's `endpoint`: Argo CD's destination `server`; null when "
                       "not known."})
    stage = fields.String(metadata={"description": "Its stage in the rollout asked for "
                                    "(`parameters.rollout`); absent otherwise."})


class ArgoCDOutputSchema(Schema):
    parameters = fields.List(fields.Nested(ArgoCDClusterParametersSchema), required=True,
                             metadata={"maxItems": MAX_INTEGRATION_CLUSTERS})


class ArgoCDResponseSchema(Schema):
    """What Argo CD's plugin generator reads: one parameter set per cluster."""

    output = fields.Nested(ArgoCDOutputSchema, required=True)


class PrometheusTargetsArgsSchema(Schema):
    filter = fields.String(validate=validate.Length(max=MAX_FILTER), metadata=_FILTER)


class PrometheusTargetGroupSchema(Schema):
    """One target group of Prometheus' HTTP service discovery."""

    targets = fields.List(fields.String(), required=True,
                          metadata={"maxItems": 1, "examples": [["api.prod.example.com:6443"]]})
    labels = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
