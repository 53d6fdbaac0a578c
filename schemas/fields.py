"""Field types with the service's input rules, shared by every schema."""
import re

from marshmallow import ValidationError, fields, validate

from inventory.core.ids import MAX_SLUG, SLUG_RE
from inventory.core.labels import (
    LABEL_KEY_PATTERN,
    LABEL_KEY_RULE,
    MAX_LABEL_KEY,
    MAX_LABEL_VALUE,
    MAX_LABELS,
    label_key_problem,
)

# C0/C1 control characters other than tab, newline and carriage return
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# ...and in single-line text, every line break: also U+2028 and U+2029
_CONTROL_OR_BREAK = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# the same rules as JSON Schema patterns, for the document
_TEXT_PATTERN = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"
_LINE_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$"

SLUG_DESCRIPTION = (f"An RFC 1123 DNS label: 1 to {MAX_SLUG} characters of a-z, 0-9 and '-', "
                    "starting and ending with a letter or digit.")


class Text(fields.String):
    """A string with a length limit and no control characters.

    Single-line text (names, titles) refuses line breaks too; `multiline`
    text (descriptions) allows tab, newline and carriage return.
    """

    def __init__(self, max_length, *, min_length=0, multiline=False, **kwargs):
        self._control = _CONTROL if multiline else _CONTROL_OR_BREAK
        validators = [validate.Length(min=min_length, max=max_length), self._no_control]
        metadata = {"maxLength": max_length,
                    "pattern": _TEXT_PATTERN if multiline else _LINE_PATTERN,
                    **kwargs.pop("metadata", {})}
        if min_length:
            metadata["minLength"] = min_length
        super().__init__(validate=validators, metadata=metadata, **kwargs)

    def _no_control(self, value):
        if self._control.search(value):
            raise ValidationError("Must not contain control characters"
                                  + ("." if self._control is _CONTROL else " or line breaks."))


# the largest integer every JSON client holds exactly (an IEEE 754 double)
MAX_SAFE_INTEGER = 2**53 - 1


class WholeNumber(fields.Integer):
    """An integer as JSON Schema counts one: `5` and `5.0` alike (JSON does
    not tell them apart, and `time.time() // 1` makes the second), never
    `5.5`, `true` or `"5"`. In a query string (`text=True`) its decimal text:
    `5` or `5.0`. Documented as `int64`, with the bounds of its `validate`."""

    _TEXT = re.compile(r"[+-]?[0-9]{1,19}(?:\.0+)?")

    def __init__(self, *, text=False, **kwargs):
        self.text = text
        metadata = {"format": "int64", **kwargs.pop("metadata", {})}
        super().__init__(strict=True, metadata=metadata, **kwargs)

    def _validated(self, value):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif self.text and isinstance(value, str) and self._TEXT.fullmatch(value):
            value = int(value.partition(".")[0])
        return super()._validated(value)


class JsonBoolean(fields.Boolean):
    """`true` or `false`, nothing else: marshmallow's Boolean also takes
    "yes", "on", 1 and their like, which JSON Schema's boolean refuses."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class Slug(fields.String):
    def __init__(self, **kwargs):
        metadata = {"description": SLUG_DESCRIPTION, "pattern": SLUG_RE.pattern,
                    "maxLength": MAX_SLUG, **kwargs.pop("metadata", {})}
        super().__init__(
            validate=validate.Regexp(SLUG_RE, error="Must be an RFC 1123 DNS label "
                                     f"(1-{MAX_SLUG} of a-z, 0-9, '-'; letter or digit at both "
                                     "ends)."),
            metadata=metadata, **kwargs)


class Labels(fields.Dict):
    """A string-to-string map with bounded keys, values and size; keys are
    Kubernetes label keys (inventory.core.labels)."""

    def __init__(self, *, allow_null_values=False, **kwargs):
        metadata = {"description": f"At most {MAX_LABELS} labels; each key is {LABEL_KEY_RULE}; "
                    f"values are up to {MAX_LABEL_VALUE} characters"
                    + ("; a null value removes the label." if allow_null_values else "."),
                    "maxProperties": MAX_LABELS,
                    "propertyNames": {"pattern": LABEL_KEY_PATTERN, "maxLength": MAX_LABEL_KEY},
                    **kwargs.pop("metadata", {})}
        super().__init__(
            keys=fields.String(validate=self._label_key),
            values=Text(MAX_LABEL_VALUE, allow_none=allow_null_values),
            validate=self._at_most, metadata=metadata, **kwargs)

    @staticmethod
    def _label_key(key):
        problem = label_key_problem(key)
        if problem is not None:
            raise ValidationError(problem)

    @staticmethod
    def _at_most(labels):
        # a function, not validate.Length: that would read as maxLength in the document
        if len(labels) > MAX_LABELS:
            raise ValidationError(f"At most {MAX_LABELS} labels.")
