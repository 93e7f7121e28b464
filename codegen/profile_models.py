# dlmap codegen — a profile's `models:` key: the peer release range the profile reproduces (stdlib only).
"""`models: "numpy >= 2.5"` names the system a profile reproduces and the releases it was proven against, so that a
profile never silently models one release of a moving peer (issue 50). Read by codegen/spec_profile.py (the generator
and `dlmap spec check`) and by the differential tests, which pick the profile whose range holds the installed peer.

  models: "<peer> <op> <version>[, <op> <version>]..."
    peer     a lower-case word (numpy, torch, jax, array-api, acme)
    op       >=, >, <=, <, ==
    version  numbers joined by dots (2.5, 0.11.1, 2023.12); compared number by number, a missing number read as 0

A range no release satisfies (">= 3, < 2", "> 2, < 2.0.0") is refused. Any number of numbers make a release, so
releases lie densely (2.0.0.1 lies between 2 and 2.0.1) and the lowest is 0: a range is empty only when its highest
lower bound passes its lowest upper bound, or meets it with either strict, or when it stays below 0.

A child profile (`extends:`) inherits its parent's range unless it states its own.
Dependency-free so that a copy can travel with the tests that use it.
"""

import re

OPERATORS = (">=", "<=", "==", ">", "<")
_PEER = re.compile(r"^[a-z][a-z0-9_.-]*$")
_CLAUSE = re.compile(r"^(>=|<=|==|>|<)\s*([0-9]+(?:\.[0-9]+)*)$")
EXAMPLE = 'write e.g. "numpy >= 2.5" or "numpy >= 2.4, < 2.5"'


class ModelsError(ValueError):
    """A `models:` value that is not a release range; the text says why (the caller adds the file and key)."""


def parse(text):
    """'numpy >= 2.4, < 2.5' → ('numpy', [('>=', (2, 4)), ('<', (2, 5))]); ModelsError when it is not a range."""
    if not isinstance(text, str) or not text.strip():
        raise ModelsError("%r is not a release range (%s)" % (text, EXAMPLE))
    peer, _, rest = text.strip().partition(" ")
    if not _PEER.match(peer) or not rest.strip():
        raise ModelsError("%r is not a release range: it needs a peer name and at least one bound (%s)"
                          % (text, EXAMPLE))
    clauses = []
    for part in rest.split(","):
        match = _CLAUSE.match(part.strip())
        if not match:
            raise ModelsError("%r is not a release range: %r is not a bound such as '>= 2.5' (%s)"
                              % (text, part.strip(), EXAMPLE))
        clauses.append((match.group(1), tuple(int(n) for n in match.group(2).split("."))))
    _check_not_empty(text, clauses)
    return peer, clauses


_LOWEST = (">=", (0,))  # the bound every release meets, for a range that states no lower bound


def _check_not_empty(text, clauses):
    """ModelsError when no release lies within every bound (issue 56): only the strictest bound of each side
    matters, `==` being a bound on both sides."""
    lower, upper = None, None
    for op, bound in clauses:
        if op in (">=", ">", "==") and (lower is None or _stricter(op, bound, lower, 1)):
            lower = (op, bound)
        if op in ("<=", "<", "==") and (upper is None or _stricter(op, bound, upper, -1)):
            upper = (op, bound)
    if upper is None:
        return
    low = lower or _LOWEST
    order = _compare(low[1], upper[1])
    if order > 0 or (order == 0 and (low[0] == ">" or upper[0] == "<")):
        named = [c for c in (lower, upper) if c is not None]
        raise ModelsError("%r is an empty range: no release is %s"
                          % (text, " and ".join("%s %s" % (op, ".".join(map(str, b))) for op, b in named)))


def _stricter(op, bound, than, side):
    """Whether `op bound` leaves fewer releases than the bound `than` on its side (1: lower, -1: upper)."""
    order = _compare(bound, than[1]) * side
    return order > 0 or (order == 0 and op in (">", "<") and than[0] not in (">", "<"))


def release(version):
    """A peer's version string ('2.5.2', '2.14.1+cpu', '0.11.2.dev20261201', '2.0.0rc1') as numbers: (2, 5, 2)."""
    numbers = []
    for part in version.split("+")[0].split("."):
        digits = re.match(r"^[0-9]+", part)
        if not digits:
            break
        numbers.append(int(digits.group(0)))
        if digits.group(0) != part:  # 0rc1: the release's own number, then stop
            break
    return tuple(numbers)


def _compare(a, b):
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def holds(text, peer, version):
    """Whether the range `text` claims `version` (a string) of `peer`."""
    name, clauses = parse(text)
    if name != peer:
        return False
    numbers = release(version)
    tests = {">=": lambda c: c >= 0, ">": lambda c: c > 0, "<=": lambda c: c <= 0, "<": lambda c: c < 0,
             "==": lambda c: c == 0}
    return bool(numbers) and all(tests[op](_compare(numbers, bound)) for op, bound in clauses)
