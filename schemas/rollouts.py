"""Rollouts: upgrade waves toward a target minor, stage by stage; their
status, their clusters, and the approval of a held stage."""
from marshmallow import Schema, ValidationError, fields, validate

from inventory.core import rollouts as rules
from inventory.core.filtering import MAX_LENGTH as MAX_FILTER
from inventory.core.ids import ORGANIZATION_ID as ORG_ID
from inventory.core.readiness import CHECKS as READINESS_CHECKS
from schemas.common import (
    BodySchema,
    audit_fields,
    continue_field,
    envelope,
    filter_field,
    format_field,
    limit_field,
    request_schema,
)
from schemas.fields import MAX_SAFE_INTEGER, JsonBoolean, Slug, Text, WholeNumber

_TIME = {"format": "date-time"}


def _target(value):
    if rules.parse_target(value) is None:
        raise ValidationError("Must be a minor version, such as 1.32.")


def _soak(value):
    if rules.parse_soak(value) is None:
        raise ValidationError("Must be an ISO 8601 duration of weeks, days, hours, minutes "
                              "and seconds, from PT0S to P30D (PT12H, P2D).")


def _distinct_names(stages):
    seen, errors = set(), {}
    for index, stage in enumerate(stages):
        name = stage.get("name") if isinstance(stage, dict) else None
        if name in seen:
            errors[index] = {"name": ["Another stage of the rollout has this name."]}
        seen.add(name)
    if errors:
        raise ValidationError(errors)


class RolloutStageSchema(Schema):
    name = Slug(required=True, metadata={"description": "The stage's slug, unique in the "
                                         "rollout."})
    filter = fields.String(required=True, validate=validate.Length(max=MAX_FILTER), metadata={
        "description": "The clusters' filter, as `GET /kubeclusters` takes it: a cluster "
                       "belongs to the first stage whose filter matches it. Empty: every "
                       "cluster (left by the stages before).",
        "examples": ['labels.wave="canary"', 'environment="production"']})
    soak = fields.String(load_default="PT0S", validate=_soak, metadata={
        "description": "How long the stage waits, once every cluster of it is done, "
                       "before the next stage's turn: an ISO 8601 duration, PT0S to P30D.",
        "pattern": rules.SOAK_PATTERN, "maxLength": rules.MAX_SOAK_LENGTH,
        "examples": ["PT0S", "PT12H", "P2D"]})
    approval = JsonBoolean(load_default=False, metadata={
        "description": "Whether its turn waits for `POST /rollouts/{rollout}:approve`."})


class RolloutStageStatusSchema(Schema):
    name = fields.String(required=True)
    state = fields.String(required=True, metadata={"enum": list(rules.STAGE_STATES)})
    clusters = WholeNumber(required=True, metadata={"minimum": 0,
                                                    "maximum": MAX_SAFE_INTEGER})
    done = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER})
    ready = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER})
    blocked = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER})
    behind = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER})
    opened_on = fields.String(required=True, allow_none=True, metadata=_TIME)
    soak_ends_on = fields.String(required=True, allow_none=True, metadata=_TIME)
    completed_on = fields.String(required=True, allow_none=True, metadata=_TIME)
    approved_by = fields.String(required=True, allow_none=True)
    approved_on = fields.String(required=True, allow_none=True, metadata=_TIME)


class RolloutStatusSchema(Schema):
    state = fields.String(required=True, metadata={"enum": list(rules.ROLLOUT_STATES)})
    stages = fields.List(fields.Nested(RolloutStageStatusSchema), required=True,
                         metadata={"maxItems": rules.MAX_STAGES})
    unstaged = WholeNumber(required=True, metadata={
        "minimum": 0, "maximum": MAX_SAFE_INTEGER,
        "description": "Clusters the rollout may see that no stage's filter matches."})
    computed_on = fields.String(required=True, allow_none=True, metadata={
        **_TIME, "description": "When the counts were worked out: now, for a read of the "
        "rollout; a list shows the counts of the last look (within seconds for an active "
        "rollout)."})


class RolloutSchema(BodySchema):
    """An upgrade wave of the fleet toward a target minor, stage by stage."""

    SCHEMA_NAME = "Rollout"
    name = Slug(required=True, metadata={"description": "The rollout's slug, unique in the "
                                         "deployment; cannot be changed."})
    title = Text(200, required=True, metadata={"description": "Display name; may be empty."})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; may be empty."})
    organization = fields.String(
        required=True, allow_none=True,
        validate=validate.Regexp(ORG_ID.pattern, error="Must be an organization id."),
        metadata={"description": "The organization whose clusters it stages (a scoped "
                  "caller's own); null: every organization's (a fleet-wide rollout, made by "
                  "an unscoped admin and seen by unscoped callers only). Cannot be changed.",
                  "pattern": ORG_ID.pattern.pattern, "maxLength": ORG_ID.max_length})
    target = fields.String(required=True, validate=_target, metadata={
        "description": "The minor version the clusters go to; cannot be changed.",
        "pattern": r"^\d+\.\d+$", "maxLength": 7, "examples": ["1.32"]})
    paused = JsonBoolean(required=True, metadata={
        "description": "No stage's turn comes while true; open stages stay open."})
    stages = fields.List(fields.Nested(RolloutStageSchema), required=True, validate=[
        validate.Length(min=1, max=rules.MAX_STAGES), _distinct_names], metadata={
        "description": f"1 to {rules.MAX_STAGES} stages, in the order they go."})
    status = fields.Nested(RolloutStatusSchema, dump_only=True, required=True, metadata={
        "description": "Where the rollout stands: each stage's state and clusters by state."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


RolloutCreateSchema = request_schema(
    RolloutSchema, "RolloutCreate", required=("name", "target", "stages"),
    defaults={"title": "", "description": "", "organization": None, "paused": False},
    example={"name": "k8s-1-32", "title": "Kubernetes 1.32", "target": "1.32",
             "stages": [{"name": "canary", "filter": 'labels.wave="canary"'},
                        {"name": "staging", "filter": 'environment="staging"', "soak": "P1D"},
                        {"name": "production", "filter": 'environment="production"',
                         "soak": "P2D", "approval": True}]})
RolloutPatchSchema = request_schema(RolloutSchema, "RolloutPatch", change=True,
                                    immutable=("name", "organization", "target"),
                                    example={"paused": True})
RolloutListSchema = envelope("RolloutList", RolloutSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = ['target="1.32"', 'name="k8s-*"']


class RolloutApproveSchema(BodySchema):
    """The held stage to approve."""

    SCHEMA_NAME = "RolloutApprove"
    EXAMPLE = {"stage": "production"}
    IGNORED = frozenset({"$schema"})  # a client may send back what it read

    class Meta:
        exclude = ("schema_url",)  # a request: it names no schema of its own
    stage = Slug(required=True, metadata={"description": "The held stage's name."})


class RolloutClusterReadinessCheckSchema(Schema):
    id = fields.String(required=True)
    status = fields.String(required=True)
    summary = fields.String(required=True)


class RolloutClusterReadinessSchema(Schema):
    status = fields.String(required=True)
    target = fields.String(required=True, allow_none=True)
    checks = fields.List(fields.Nested(RolloutClusterReadinessCheckSchema), required=True,
                         metadata={"description": "Its checks that are not passing: what "
                                   "blocks it (or warns).", "maxItems": len(READINESS_CHECKS)})


class RolloutClusterSchema(BodySchema):
    """One cluster of a rollout: its stage and its state toward the target."""

    SCHEMA_NAME = "RolloutCluster"
    cluster = fields.String(required=True)
    stage = fields.String(required=True)
    state = fields.String(required=True, metadata={"enum": list(rules.CLUSTER_STATES)})
    minor = fields.String(required=True, allow_none=True, metadata={
        "description": "Its minor: the observed one when a scan observed the API server, "
                       "else the recorded one."})
    readiness = fields.Nested(RolloutClusterReadinessSchema, required=True)


RolloutClusterListSchema = envelope("RolloutClusterList", RolloutClusterSchema)
CLUSTER_FILTER_EXAMPLES = ['state="blocked"', 'stage="canary" AND state!="done"']


class RolloutClusterListArgsSchema(Schema):
    filter = filter_field(CLUSTER_FILTER_EXAMPLES, "Of `stage` and `state` (`=`, `!=`, "
                          "`AND`, `OR`, `NOT`; a `*` ends a prefix).")
    limit = limit_field()
    continue_ = continue_field()
    format_ = format_field()
