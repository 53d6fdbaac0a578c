"""Kubernetes versions (inventory/core/versions.py): the grammar, and the
key that compares them as versions, suffixes ignored."""
import pytest

from inventory.core.versions import (
    MAX_VERSION_LENGTH,
    VERSION_RE,
    numbers_given,
    version_key,
    version_parts,
)


@pytest.mark.parametrize("text", ["1.31", "1.31.2", "v1.31.2-eks-1234", "1.29.3+k3s1"])
def test_a_clusters_version_may_be(text):
    assert VERSION_RE.match(text)


@pytest.mark.parametrize("text", ["1", "1.31.2.4", "v", "1.x", "١.٢", "1.31-", "11111.1"])
def test_a_clusters_version_may_not_be(text):
    assert not VERSION_RE.match(text)


def test_the_longest_version_the_grammar_takes_is_the_stated_length():
    longest = "v" + "1" * 4 + "." + "2" * 4 + "." + "3" * 6 + "-" + "a" * 100
    assert VERSION_RE.match(longest) and len(longest) == MAX_VERSION_LENGTH
    assert not VERSION_RE.match(longest + "a")


def test_parts_ignore_the_suffix_and_fill_what_is_missing():
    assert version_parts("v1.31.2-eks-1234") == (1, 31, 2)
    assert version_parts("1.29") == (1, 29, 0)
    assert version_parts("1") == (1, 0, 0)  # a filter's bare major
    assert version_parts("1.2.3.4") is None and version_parts(None) is None
    assert version_parts("1.99999") is None  # not 1.0.99999


def test_the_key_sorts_as_versions_do():
    texts = ["1.29", "1.9", "1.31.2", "v1.31.10", "1.31.2-eks-1", "2.0"]
    ordered = sorted(texts, key=version_key)
    assert ordered[:2] == ["1.9", "1.29"] and ordered[-1] == "2.0"
    assert version_key("1.31.2-eks-1") == version_key("1.31.2") == "0001.0031.000002"
    assert version_key("v1.31.10") > version_key("1.31.2")
    assert version_key("nope") is None


def test_numbers_given_counts_what_is_spelled_out():
    assert numbers_given("v1.31") == (2, False)
    assert numbers_given("1.31.2-eks-1") == (3, True)
    assert numbers_given("1") == (1, False)
    assert numbers_given("x") is None
