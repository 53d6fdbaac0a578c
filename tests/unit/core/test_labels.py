"""The label key rule on its own (inventory.core.labels), against the cases
Kubernetes' own validation (apimachinery's IsQualifiedName) accepts and
refuses, and how a field path with such a key is written and read back
(inventory.core.filtering.path_text, read_path)."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inventory.core.filtering import parse, path_text, read_path
from inventory.core.labels import LABEL_KEY_PATTERN, MAX_LABEL_KEY, is_label_key

# apimachinery's TestIsQualifiedName, good and bad, and the bounds
GOOD = ["simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple",
        "now-with-dashes/simple", "now-with-dashes/now-with-dashes",
        "now.with.dots/simple", "now-with.dashes-and.dots/simple", "1-num.2-num/3-num",
        "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123",
        "requests.storage-foo", "a" * 63, "a" * 253 + "/" + "b" * 63,
        "app.kubernetes.io/name", "topology.kubernetes.io/region"]
BAD = ["nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash",
       "Example.com/abc", "example_com/abc", "example.com/", "/simple", "a" * 64,
       "a" * 254 + "/abc", "", "a..b/c", "a./c", ".a/c", "a/-b", "a/b.", "ab/c d", "é"]


@pytest.mark.parametrize("key", GOOD)
def test_what_kubernetes_accepts_is_a_label_key(key):
    assert is_label_key(key)


@pytest.mark.parametrize("key", BAD)
def test_what_kubernetes_refuses_is_not(key):
    assert not is_label_key(key)


def test_the_documented_pattern_agrees_but_for_the_prefix_bound():
    import re
    for key in GOOD:
        assert re.fullmatch(LABEL_KEY_PATTERN, key) and len(key) <= MAX_LABEL_KEY, key
    for key in BAD:
        if key != "a" * 254 + "/abc":  # a pattern without lookahead cannot bound the prefix
            assert not re.fullmatch(LABEL_KEY_PATTERN, key), key


@pytest.mark.parametrize("segments, text", [
    (("labels", "team"), "labels.team"),
    (("labels", "tier-1"), "labels.tier-1"),
    (("labels", "007"), "labels.007"),
    (("labels", "app.kubernetes.io/name"), 'labels."app.kubernetes.io/name"'),
    (("labels", "AND"), 'labels."AND"'),
    (("labels", 'a"b\\c'), 'labels."a\\"b\\\\c"'),
    (("support", "status"), "support.status"),
])
def test_a_path_is_written_bare_where_it_reads_back_so_else_quoted(segments, text):
    assert path_text(segments) == text
    assert read_path(text) == (segments, len(text))
    assert parse(f"{text}=\"x\"").path == segments


@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=4).filter(
    lambda segments: path_text(segments[:1]) == segments[0]))
def test_any_path_reads_back_as_written(segments):
    text = path_text(segments)
    assert read_path(text) == (tuple(segments), len(text))
