"""Hypothesis strategies and settings shared by the property tests that throw generated input at
the app (the API, the operations data filter) and assert it never answers 5xx.

The examples are derandomized so CI sees the same ones each run and stays fast; set
FLOWDESK_FUZZ_EXAMPLES (e.g. 5000) to explore further locally, and FLOWDESK_FUZZ_RANDOM=1 to
draw new examples each run.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("FLOWDESK_FUZZ_EXAMPLES", "150"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("FLOWDESK_FUZZ_RANDOM") != "1",
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# Text the databases refuse or that breaks naive parsing: NUL, lone surrogates, Unicode digits,
# quotes, path separators and very large numbers written out.
AWKWARD = [
    "\x00",
    "a\x00b",
    "\ud800",
    "\udfff",
    "²",
    "\uff11\uff12",  # fullwidth digits
    "1_0",
    " 1",
    "-1",
    "1e3",
    "9" * 20,
    str(2**31),
    str(2**63),
    "9" * 400,
    "'",
    '"',
    "\\",
    ".",
    "[",
    "]",
    "é",
    "",
    " ",
    "NaN",
    "Infinity",
]
awkward_text = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(max_size=30),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=10),
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),
    st.sampled_from([2**31, 2**63, 2**64, 1e308, -1e308, 5e-324]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, awkward_text)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(awkward_text, children, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int, inner: str = "1") -> str:
    """JSON text nesting `inner` in `depth` lists."""
    return "[" * depth + inner + "]" * depth


deep_json = st.sampled_from([40, 900, 5_000, 100_000]).map(nested)
