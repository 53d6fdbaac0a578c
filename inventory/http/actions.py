"""The actions on a record (`/rollouts/<rollout>:approve`), as the
blueprints declare their routes. The record's own route matches an action's
URL too (its key taking the `:approve`), and werkzeug would answer such a
URL with the methods of both routes. The URL is the action's alone: a
method the action does not take is a 405 naming the action's methods, and
OPTIONS lists only those."""
import re

_PARAMETER = re.compile(r"<(?:[^:<>]+:)?[^<>]+>")
_ENDS_IN_ACTION = re.compile(r">:[a-z][A-Za-z]*$")  # a rule ending in `<key>:verb`
_ACTIONS = []  # (the action's URL as a regular expression, its methods)


def declare(rule, methods):
    """Note `rule`, taking `methods`, when it is an action's."""
    if _ENDS_IN_ACTION.search(rule):
        pattern = "[^/]+".join(re.escape(part) for part in _PARAMETER.split(rule))
        _ACTIONS.append((re.compile(pattern), frozenset({*methods, "OPTIONS"})))


def methods_of(path):
    """The methods of the action whose URL `path` is, or None."""
    for pattern, methods in _ACTIONS:
        if pattern.fullmatch(path):
            return methods
    return None
