"""What the agent prints of others' text (inventory.agent.redaction): the
credentials in it redacted, and the words around them kept."""
import pytest

from inventory.agent.redaction import (
    MAX_LINE,
    MAX_SERVER_TEXT,
    line,
    server_text,
    url_secrets,
    without_userinfo,
)


@pytest.mark.parametrize("text, gone", [
    ("Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
    ('{"authorization": "Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig"}', "eyJhbGciOiJSUzI1NiJ9"),
    ("proxy-authorization=Basic YWdlbnQ6czNjcmV0", "YWdlbnQ6czNjcmV0"),
    ("bearer sha256~longtokenvalue", "sha256~longtokenvalue"),
    ("GET /x?access_token=0123456789abcdef", "0123456789abcdef"),
    ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
    ("dial https://agent:s3cret-pw@inventory.example.com: refused", "s3cret-pw"),
    ("Cookie: session=abc", "session=abc"),
])
def test_what_looks_like_a_credential_is_redacted(text, gone):
    said = server_text(text)
    assert gone not in said and "[redacted]" in said


@pytest.mark.parametrize("text", [
    "Missing or invalid bearer token.",
    "could not get a token: the SSO session expired",
    "the token is not valid for this audience",
])
def test_words_about_credentials_are_kept(text):
    assert server_text(text) == text


def test_the_secrets_held_are_redacted_wherever_they_are():
    assert server_text("echo: xyz-held-token-xyz!", ["xyz-held-token-xyz"]) == "echo: [redacted]!"
    assert "abc" in server_text("abc", ["abc"])  # too short to be a credential


def test_control_characters_escapes_and_line_breaks_become_one_line():
    said = server_text("a\x1b[31mred\x1b[0m\r\nInjected: yes\u202etxt\x00")
    assert said == "a red Injected: yes txt"


def test_length_is_capped():
    assert len(server_text("x" * 10_000)) == MAX_SERVER_TEXT
    assert server_text("x" * 10_000).endswith("...")
    assert len(line("y " * 10_000)) <= MAX_LINE


def test_urls_are_shown_without_their_userinfo():
    assert without_userinfo("https://agent:pw@inventory.example.com:8443/x") == \
        "https://inventory.example.com:8443/x"
    assert without_userinfo("https://inventory.example.com/x") == "https://inventory.example.com/x"
    assert url_secrets("https://agent:pw@inventory.example.com") == ["pw", "agent"]
    assert url_secrets("https://inventory.example.com") == []
