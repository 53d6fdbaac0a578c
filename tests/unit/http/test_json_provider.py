"""The JSON provider: answers written by orjson, a field's stored JSON text
embedded byte for byte, and the standard library past orjson."""
from inventory.store.stored_json import StoredJSON


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
