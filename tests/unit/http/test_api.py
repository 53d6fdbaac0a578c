"""inventory.http.api, on its own: the OpenAPI document served is the
completed one (inventory.http.openapi), built once; flask-smorest's error
handlers are left out (every error in the interface's format); labels'
`propertyNames` reach the document; Swagger UI's files are served from the
package, not a CDN. The document's content: tests/unit/http/test_openapi.py,
tests/unit/http/test_operations.py."""
from inventory.http.api import SWAGGER_UI_DIST, Api
from tests.conftest import assert_problem


def test_the_document_is_the_completed_one_built_once(app, anonymous):
    api = app.extensions["inventory.http.api"]
    assert isinstance(api, Api)
    with app.app_context():
        first = api.openapi_document()
        assert api.openapi_document() is first
    served = anonymous.get("/openapi.json").get_json()
    assert served == first
    assert "bearerAuth" in served["components"]["securitySchemes"]  # the completion's
    assert "PaginationMetadata" not in served["components"]["schemas"]


def test_errors_are_the_interfaces_not_flask_smorests(client):
    """An argument flask-smorest's parser refuses: the service's error body."""
    assert_problem(client.get("/organizations?limit=many"), 422, "query.limit")
    assert_problem(client.get("/no-such-route"), 404)


def test_a_fields_property_names_reach_the_document(anonymous):
    schemas = anonymous.get("/openapi.json").get_json()["components"]["schemas"]
    labels = schemas["KubeCluster"]["properties"]["labels"]
    assert "pattern" in labels["propertyNames"]


def test_swagger_ui_is_served_from_the_package(anonymous):
    page = anonymous.get("/docs")
    assert page.status_code == 200 and b"/docs/assets/" in page.get_data()
    asset = anonymous.get("/docs/assets/swagger-ui-bundle.js")
    assert asset.status_code == 200
    with open(f"{SWAGGER_UI_DIST}/swagger-ui-bundle.js", "rb") as shipped:
        assert asset.get_data() == shipped.read()
