"""The JSON provider (inventory/http/json_provider.py): answers written by
orjson, compact; a field's stored JSON text embedded byte for byte; the
standard library past orjson (integers over 64 bits)."""
import json

from flask import Flask

from inventory.http.json_provider import OrjsonProvider
from inventory.store.stored_json import StoredJSON


def _provider():
    app = Flask(__name__)
    app.json = OrjsonProvider(app)
    return app, app.json


def test_an_answer_embeds_stored_text_as_it_is(app):
    """The JSON provider writes the stored text byte for byte (no parse,
    no re-serialisation), in an answer and through `dumps`."""
    odd = '[{"id":"x",  "n":1.50}]'  # spacing and a number spelling only a copy keeps
    with app.app_context():
        answer = app.json.response({"checks": StoredJSON(odd)})
        assert answer.get_data() == b'{"checks":' + odd.encode() + b"}\n"
        assert app.json.dumps({"checks": StoredJSON(odd)}) == '{"checks":' + odd + "}"
        # past orjson (an integer over 64 bits): the standard library, parsed
        assert app.json.loads(app.json.dumps({"big": 2**70, "checks": StoredJSON(odd)})) == {
            "big": 2**70, "checks": [{"id": "x", "n": 1.5}]}


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
