"""Flask's JSON provider on orjson: encoding a page is several times faster."""
import orjson
from flask.json.provider import DefaultJSONProvider


class OrjsonProvider(DefaultJSONProvider):
    def dumps(self, obj, **kwargs):
        return orjson.dumps(obj, default=self.default).decode()

    def loads(self, s, **kwargs):
        return orjson.loads(s)
