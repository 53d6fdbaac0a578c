"""`GET /`: where to go from the root, for a person with curl or a client."""


def test_the_root_lists_every_parameterless_top_level_path_as_absolute_urls(anonymous):
    answer = anonymous.get("/")
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["$schema"] == "http://localhost/schemas/ServiceIndex.json"
    links = body["links"]
    for name in ("docs", "openapi.json", "schemas", "healthz", "readyz", "events",
                 "organizations", "kubeplatforms", "kubeclusters", "tokens", "webhooks"):
        assert links[name] == f"http://localhost/{name}"
    assert links["ui"] == "http://localhost/ui"  # the console
    for name, url in links.items():  # each one answers (some need a token: 401, not 404;
        # the console's pages lead to its sign-in: 303)
        assert anonymous.get(url).status_code in ((303,) if name == "ui" else (200, 401)), name


def test_the_root_needs_no_token_and_is_in_the_document(anonymous):
    assert anonymous.get("/").status_code == 200
    document = anonymous.get("/openapi.json").get_json()
    assert document["paths"]["/"]["get"]["operationId"] == "getServiceIndex"
