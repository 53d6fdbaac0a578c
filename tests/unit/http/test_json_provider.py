"""Flask's JSON on orjson (inventory/http/json_provider.py): stored JSON
text embedded as it is, integers past 64 bits still written, compact."""
import json

from flask import Flask

from inventory.core.json_text import JSONText
from inventory.http.json_provider import OrjsonProvider


def _provider():
    app = Flask(__name__)
    app.json = OrjsonProvider(app)
    return app, app.json


def test_stored_json_text_is_embedded_as_it_is():
    _, provider = _provider()
    text = JSONText('{"b": 1, "a": [true]}')
    assert provider.dumps({"checks": text}) == '{"checks":{"b": 1, "a": [true]}}'


def test_an_integer_past_64_bits_is_written_as_json_would():
    _, provider = _provider()
    big = 2 ** 70
    assert json.loads(provider.dumps({"value": big})) == {"value": big}


def test_a_response_is_compact_with_a_newline_and_loads_back():
    app, provider = _provider()
    with app.app_context():
        response = provider.response({"a": [1, 2]})
    assert response.get_data() == b'{"a":[1,2]}\n' and response.mimetype == "application/json"
    assert provider.loads(b'{"a": [1, 2]}') == {"a": [1, 2]}
