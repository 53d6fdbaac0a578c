"""The idempotency fingerprint's parse: the value json.loads gives, for every
body (keys stored before it was orjson's are still matched by a retry)."""
import json
import math

import pytest

BODIES = [b'{"b": 1, "a": [1.5, 1e16, 1e-07, -0.0, 5.0]}', '{"t": "\u00e9\u6f22"}'.encode(),
          b'{"n": 123456789012345678901234567890}', b'{"n": -18446744073709551616}',
          b'{"n": 9223372036854775807, "m": 18446744073709551615}', b'{"d": 1, "d": 2}', b'[]', b'"x"',
          b'{"s": "\\ud83d\\ude00 \\u00e9"}']


@pytest.mark.parametrize("body", BODIES)
def test_the_value_is_json_loads(body, fingerprint_parse):
    value = fingerprint_parse(body)
    assert value == json.loads(body) and repr(value) == repr(json.loads(body))
    assert json.dumps(value, sort_keys=True) == json.dumps(json.loads(body), sort_keys=True)


def test_what_orjson_refuses_is_parsed_as_json_loads_does(fingerprint_parse):
    assert math.isnan(fingerprint_parse(b'{"x": NaN}')["x"])
    with pytest.raises(ValueError):
        fingerprint_parse(b'{"x": ')
