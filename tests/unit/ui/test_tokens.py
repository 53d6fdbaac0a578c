"""The tokens' console page, for admins: the declared list with a Revoke
on each row, and the form that makes a token (its secret shown once)."""
import re

from tests.api.test_console_access import form_token, sign_in
from tests.conftest import ADMIN_TOKEN


def test_a_made_tokens_secret_is_shown_in_that_answer_only(app, client):
    console = sign_in(app, ADMIN_TOKEN)
    made = console.post("/ui/tokens", data={"form_token": form_token(console, "/ui/tokens"),
                                            "name": "ops", "role": "reader"})
    assert made.status_code == 201
    secret = re.search(r'id="new-token" type="text" readonly value="([^"]+)"',
                       made.get_data(as_text=True)).group(1)
    assert client.get("/tokens", headers={"Authorization": f"Bearer {secret}"}).status_code \
        in (200, 403)  # a real token (a reader may not list tokens)
    listed = console.get("/ui/tokens").get_data(as_text=True)
    assert secret not in listed and 'aria-label="Revoke ops"' in listed


def test_a_refused_token_keeps_the_form_and_says_why(app):
    console = sign_in(app, ADMIN_TOKEN)
    refused = console.post("/ui/tokens", data={"form_token": form_token(console),
                                               "name": "x" * 500, "role": "writer"})
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and 'id="name-error"' in text
    assert "<option selected>writer</option>" in text  # the form as sent


def test_the_tokens_list_takes_the_apis_query(app):
    console = sign_in(app, ADMIN_TOKEN)
    assert console.get('/ui/tokens?filter=role%3D%22admin%22').status_code == 200
    refused = console.get("/ui/tokens?filter=nope%3D1")
    assert refused.status_code == 422 and 'id="filter-error"' in refused.get_data(as_text=True)
