"""A cluster, provisioned by a platform."""
import ipaddress
import re
import unicodedata
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate

from inventory.core import grouping, readiness
from inventory.core.filtering import MAX_LENGTH as MAX_FILTER
from inventory.core.labels import MAX_LABELS
from inventory.core.lifecycle import DISTRIBUTIONS, STATUSES
from inventory.core.versions import MAX_VERSION_LENGTH, VERSION_RE
from schemas.common import (
    FILTER_DESCRIPTION,
    BodySchema,
    audit_fields,
    envelope,
    request_schema,
    schema_url_field,
)
from schemas.fields import MAX_SAFE_INTEGER, DumpedAsIs, Labels, Slug, Text, WholeNumber
from schemas.scans import MAX_DEPRECATED_APIS, MAX_FINDINGS, MAX_SCANNED_ON

_DAY = {"format": "date"}
MAX_ENDPOINT = 2048
# What may follow the host: a port, then a path of RFC 3986's characters
# (anything else percent-encoded); no query or fragment
_PORT_AND_PATH = re.compile(r"(?::[0-9]{1,5})?(?:/(?:[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2})*)?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*", re.ASCII | re.IGNORECASE)
_LDH_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?", re.ASCII | re.IGNORECASE)
_HOST_RULE = ("Must name a valid host: a DNS name whose labels are 1 to 63 letters, digits "
              "and hyphens, neither first nor last a hyphen (IDNA for other scripts), an "
              "IPv4 address or an [IPv6] address.")


def _unsafe(ch):
    """Control, format (bidirectional marks and overrides, zero widths),
    separator and unassigned characters: each reaches Argo CD and Prometheus
    verbatim, and may show one URL as another."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")


def _valid_host(netloc_host):
    """Whether the host as written in the URL (brackets and all) is an
    [IPv6] or IPv4 address, or a DNS name of LDH labels (IDNA)."""
    if netloc_host.startswith("["):
        try:  # no zone (`%25eth0`) nor IPvFuture: neither names one API server
            ipaddress.IPv6Address(netloc_host[1:-1])
        except ValueError:
            return False
        return netloc_host.endswith("]") and "%" not in netloc_host
    labels = netloc_host.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):  # URL parsers read an IPv4 address (0x7f000001 too)
        try:
            ipaddress.IPv4Address(netloc_host)
        except ValueError:
            return False
        return True
    try:
        ascii_labels = [label if label.isascii() else label.encode("idna").decode("ascii")
                        for label in labels]
    except UnicodeError:
        return False
    if len(".".join(ascii_labels)) > 253:
        return False
    for label in ascii_labels:
        if not _LDH_LABEL.fullmatch(label):
            return False
        if label[:4].lower() == "xn--":  # an A-label: the Punycode of a valid U-label
            try:
                label.encode().decode("idna")
            except UnicodeError:
                return False
    return True


def _check_endpoint(url):
    """An API server's URL, as Argo CD's `server` and Prometheus' targets take it."""
    if any(_unsafe(ch) for ch in url):
        raise ValidationError("Must not contain spaces, control, bidirectional or other "
                              "invisible characters.")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port that is not a number in 0..65535
    except ValueError:
        raise ValidationError("Must be an https:// URL with a valid host and port.") from None
    if parts.scheme != "https" or not parts.hostname:
        raise ValidationError("Must be an https:// URL naming the API server's host, "
                              "e.g. https://api.prod.example.com:6443.")
    if parts.username is not None or parts.password is not None:
        raise ValidationError("Must not carry credentials: give them to the tool that "
                              "connects, never to the inventory.")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValidationError("Must not have a query or a fragment.")
    if port == 0 or parts.netloc.endswith(":"):
        raise ValidationError("Must be an https:// URL with a valid host and port.")
    netloc_host = parts.netloc.rsplit(":", 1)[0] if port is not None else parts.netloc
    if not _valid_host(netloc_host):
        raise ValidationError(_HOST_RULE)
    if not _PORT_AND_PATH.fullmatch(url[len("https://") + len(netloc_host):]):
        raise ValidationError("Must have a path of URL characters only: percent-encode "
                              "others (`%3C` for `<`).")


_STATUS = {"enum": list(STATUSES)}


class LifecycleSchema(Schema):
    """The lifecycle data that applied to the cluster's version."""

    distribution = fields.String(required=True, metadata={
        "enum": list(DISTRIBUTIONS), "description": "Whose lifecycle the cluster follows: its "
        "platform's `control_plane.provider` when `eks`, `gke` or `aks`, else `upstream`."})
    minor = fields.String(required=True, allow_none=True, metadata={
        "description": "The cluster's minor version, e.g. `1.31`.", "examples": ["1.31"]})
    released_on = fields.String(required=True, allow_none=True, metadata={
        **_DAY, "description": "When the distribution released it; null when the data does "
        "not know the version."})
    standard_support_ends_on = fields.String(required=True, allow_none=True, metadata={
        **_DAY, "description": "The day standard support ends; null when not known."})
    extended_support_ends_on = fields.String(required=True, allow_none=True, metadata={
        **_DAY, "description": "The day extended (EKS) or long-term (AKS) support ends; null "
        "where there is none."})
    source = fields.String(required=True, metadata={
        "description": "The data's source and date.",
        "examples": ["endoflife.date 2026-08-22 (a70eca337600)"]})


class SupportSchema(Schema):
    """Whether the cluster's version is supported today by its distribution."""

    status = fields.String(required=True, metadata={**_STATUS, "description": (
        "`supported`; `ending`: standard support ends within 90 days; `extended`: past "
        "standard support, within extended support; `unsupported`; `unknown`: the version "
        "is not in the lifecycle data. Computed for today.")})
    ends_on = fields.String(required=True, allow_none=True, metadata={**_DAY, "description": (
        "The first day the status no longer holds (for `supported`, the day it becomes "
        "`ending`); null when not known or when it does not end. Filterable "
        '(`support.ends_on<"+P60D"`: days from today).')})
    all_ends_on = fields.String(required=True, allow_none=True, metadata={**_DAY, "description": (
        "When support of any kind ends: the end of extended support where there is one, else "
        "of standard support (the day it ended, once past); null when the version is not in "
        "the data or no end is announced. Filterable: "
        '`support.all_ends_on<="+P60D"` finds what leaves support within 60 days.')})
    lifecycle = fields.Nested(LifecycleSchema, required=True)


class ObservedSchema(Schema):
    """What the cluster's newest scan that observed its API server saw."""

    version = fields.String(required=True, metadata={
        "description": "The API server's `gitVersion`. Filterable, compared as a version "
        '(`observed.version<"1.30"`).', "examples": ["v1.30.4-eks-a737599"]})
    minor = fields.String(required=True, allow_none=True, metadata={
        "description": "Its minor version; a summary can count by it (`group_by=observed.minor`).",
        "examples": ["1.30"]})
    scanned_on = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SCANNED_ON,
                                                      "description": "That scan's `scanned_on`."})
    scan = fields.String(required=True, metadata={"description": "That scan's id."})


_CHECK_STATUS = {"enum": list(readiness.STATUSES)}


class ReadinessCheckSchema(Schema):
    """One check of an upgrade's readiness."""

    id = fields.String(required=True, metadata={"enum": list(readiness.CHECKS), "description": (
        "`observed-version`: the recorded minor against the API server's; `kubelet-skew` and "
        "`kube-proxy-skew`: the nodes' kubelets and kube-proxies against the Kubernetes "
        "version-skew policy for the target (`kube-proxy-skew` is `passing` when the newest "
        "scan found no kube-proxy running: `nodes.kube_proxy_found` false); "
        "`deprecated-apis`: requested APIs and findings "
        "removed in the target or earlier (`error`) or in the minor after it (`warning`).")})
    status = fields.String(required=True, metadata={**_CHECK_STATUS, "description": (
        "`unknown` when no scan carried what the check needs.")})
    summary = fields.String(required=True, metadata={"description": "What it found, and what "
                                                     "to do about it."})
    details = fields.List(fields.Dict(), required=True, metadata={
        "maxItems": MAX_DEPRECATED_APIS + MAX_FINDINGS, "description": (
        "What fails, with its counts: for `observed-version` `{recorded, observed, version}`; "
        "for the skew checks `{minor, versions, nodes}`; for `deprecated-apis` `{status, group, "
        "version, resource, removed_release, requests}` per requested API and `{status, "
        "api_version, kind, removed_in, findings}` per finding's API. Empty when passing.")})


class UpgradeReadinessSchema(Schema):
    """Whether the cluster can take the next minor version after its recorded one."""

    target = fields.String(required=True, allow_none=True, metadata={
        "description": "The next minor after `version` (`1.31.2` -> `1.32`).",
        "examples": ["1.32"]})
    status = fields.String(required=True, metadata={**_CHECK_STATUS, "description": (
        "Its worst check's (`error` > `warning` > `unknown` > `passing`). Filterable "
        '(`readiness.status="error"`, served by an index) and in `group_by`.')})
    checks = fields.List(fields.Nested(ReadinessCheckSchema), required=True, metadata={
        "maxItems": len(readiness.CHECKS), "description": "The four checks, always in this "
        "order."})


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
                  "maxLength": MAX_VERSION_LENGTH,
                  "example": "v1.31.2-eks-1234"})
    title = Text(200, required=True, metadata={"description": "Display name; may be empty."})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; may be empty."})
    labels = Labels(required=True)
    endpoint = fields.String(
        required=True, allow_none=True,
        validate=[validate.Length(max=MAX_ENDPOINT), _check_endpoint],
        metadata={"description": "The API server's URL (`https://`, no credentials, query or "
                  "fragment; a DNS name of LDH labels, IDNA, or an IP literal; a path of URL "
                  "characters; no control or bidirectional characters), as Argo CD's "
                  "`server` and Prometheus' targets use it; null when not known.",
                  "format": "uri", "maxLength": MAX_ENDPOINT, "pattern": "^https://",
                  "examples": ["https://api.prod.example.com:6443"]})
    last_scanned_on = WholeNumber(dump_only=True, required=True, allow_none=True,
                                  metadata={"description": "`scanned_on` of the newest "
                                            "scan; null before the first.",
                                            "minimum": 0, "maximum": MAX_SCANNED_ON})
    support = fields.Nested(SupportSchema, dump_only=True, required=True, metadata={
        "description": "Computed when read, for today: never stored."})
    # `observed` and `readiness`: the store answers them fresh and in this
    # shape (copies of what it stored; the checks as their stored JSON
    # text): a list page does not walk them again (bench/observations.py)
    observed = DumpedAsIs(ObservedSchema, dump_only=True, required=True, allow_none=True,
                          metadata={"description": "From the newest scan (by "
                                    "`scanned_on`) that observed the API server; null "
                                    "when none did."})
    readiness = DumpedAsIs(UpgradeReadinessSchema, dump_only=True, required=True, metadata={
        "description": "Computed when a scan or the recorded version changes, and stored."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


KubeClusterCreateSchema = request_schema(
    KubeClusterSchema, "KubeClusterCreate",
    required=("name", "platform", "environment", "version"),
    defaults={"title": "", "description": "", "labels": dict, "endpoint": None},
    example={"name": "payments", "platform": "eks-prod", "environment": "production",
             "version": "v1.31.2-eks-1234", "labels": {"team": "core"}})
KubeClusterPatchSchema = request_schema(
    KubeClusterSchema, "KubeClusterPatch", change=True, immutable=("name", "platform"),
    overrides={"labels": Labels(allow_null_values=True, metadata={
        "description": "Labels to set, key by key; a null value removes that label. "
                       f"At most {MAX_LABELS} remain."})},
    example={"version": "1.32.0", "labels": {"team": None, "owner": "ops"}})
KubeClusterListSchema = envelope("KubeClusterList", KubeClusterSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = [
    'environment="production" AND version<"1.30"', "labels:team", 'labels.team="core"',
    'labels."app.kubernetes.io/name"="api"',
    'version="1.31*"', "last_scanned_on<1763800000",
    'support.status="ending" AND environment="production"',
    'NOT support.status="supported"', 'readiness.status="error"',
    'observed.version<"1.30"']


def summary_schemas(group_fields):
    """(arguments, answer) of `/kubeclusters:summary`, whose `group_by`
    takes `group_fields` (the clusters' spec's, handed by their views)."""
    listed = ", ".join(f"`{name}`" for name in group_fields)

    class KubeClusterSummaryArgsSchema(Schema):
        group_by = fields.String(
            required=True, validate=validate.Length(min=1, max=grouping.MAX_GROUP_BY),
            metadata={"description": (
                f"One to {grouping.MAX_FIELDS} fields separated by commas, among {listed} "
                "and `labels.<key>` (quoted when the key holds a `.` or `/`: "
                "`labels.\"app.kubernetes.io/name\"`; a group's key names the field so). "
                "`version` counts by minor version (`1.31`), `support.status` by today's "
                "status, `readiness.status` by the stored readiness, `observed.minor` by the "
                "minor the API server reported (null: never observed)."),
                "examples": ["environment", "version, support.status", "organization",
                             "labels.team, environment", 'labels."app.kubernetes.io/name"']})
        filter = fields.String(
            validate=validate.Length(max=MAX_FILTER),
            metadata={"description": FILTER_DESCRIPTION.split("A filtered page")[0].strip()
                      + " Every matching cluster is counted.",
                      "examples": ['environment="production"', 'support.status!="supported"']})


    class SummaryGroupSchema(Schema):
        key = fields.Dict(
            keys=fields.String(), values=fields.String(allow_none=True), required=True,
            metadata={"description": "The group's value of each `group_by` field, named as in "
                      "`group_by`; null where a cluster has no such label.",
                      "properties": {
                          **{name: {"type": "string"} for name in group_fields
                             if name not in ("support.status", "readiness.status")},
                          "support.status": {"type": "string", **_STATUS},
                          "readiness.status": {"type": "string", **_CHECK_STATUS}},
                      "examples": [{"version": "1.29", "environment": "production"}]})
        count = WholeNumber(required=True, metadata={"minimum": 1, "maximum": MAX_SAFE_INTEGER})


    class KubeClusterSummarySchema(BodySchema):
        """Counts of the clusters matching a filter, by the `group_by` fields."""

        SCHEMA_NAME = "KubeClusterSummary"
        schema_url = schema_url_field(required=True)
        groups = fields.List(fields.Nested(SummaryGroupSchema), required=True, metadata={
            "maxItems": grouping.MAX_GROUPS,
            "description": "In descending count, then key order (versions as versions, "
            "statuses in lifecycle order, a missing label first); at most "
            f"{grouping.MAX_GROUPS:,}, the largest: "
            "when the counts add up to less than `total`, smaller groups were left out.",
            "examples": [[{"key": {"environment": "production", "version": "1.31",
                                   "support.status": "extended"}, "count": 12},
                          {"key": {"environment": "staging", "version": "1.29",
                                   "support.status": "unsupported"}, "count": 3}]]})
        total = WholeNumber(required=True, metadata={"maximum": MAX_SAFE_INTEGER,
            "description": "How many clusters matched: the sum of the counts.", "minimum": 0})
    return KubeClusterSummaryArgsSchema, KubeClusterSummarySchema


class KubeClusterBlockersArgsSchema(Schema):
    filter = fields.String(
        validate=validate.Length(max=MAX_FILTER),
        metadata={"description": FILTER_DESCRIPTION.split("A filtered page")[0].strip()
                  + " Every matching cluster is counted.",
                  "examples": ['environment="production"', 'readiness.status="error"']})


class BlockerSchema(Schema):
    check = fields.String(required=True, metadata={"enum": list(readiness.CHECKS)})
    status = fields.String(required=True, metadata={"enum": ["error", "warning"]})
    key = fields.Dict(required=True, metadata={"description": (
        "What blocks: for `deprecated-apis` `{group, version, resource, removed_release}` "
        "(a requested API) or `{api_version, kind, removed_in}` (findings); for the skew "
        "checks `{minor}`; for `observed-version` `{recorded, observed}`."),
        "examples": [{"group": "policy", "version": "v1beta1",
                      "resource": "podsecuritypolicies", "removed_release": "1.25"}]})
    clusters = WholeNumber(required=True, metadata={"minimum": 1, "maximum": MAX_SAFE_INTEGER,
                                                    "description": "How many clusters it blocks."})


class KubeClusterBlockersSchema(BodySchema):
    """What stands between the matching clusters and their next minor version."""

    SCHEMA_NAME = "KubeClusterBlockers"
    schema_url = schema_url_field(required=True)
    blockers = fields.List(fields.Nested(BlockerSchema), required=True, metadata={
        "maxItems": grouping.MAX_GROUPS,
        "description": "One per failing check and key, most clusters first, then `error` "
        "before `warning`, then the checks' order and the key's; at most "
        f"{grouping.MAX_GROUPS:,}, the largest."})
    total = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER,
                                                 "description": "How many clusters matched."})
