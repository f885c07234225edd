"""Property test: every generated data filter either runs or gets the inline error, never a 5xx.

Filters are built from the expression grammar with awkward parts (numbers beyond the float
range written out, NUL in texts and keys, quotes and dots in keys, deep nesting, huge indexes)
and mixed with raw text, against instances whose data holds the same kinds of values.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from tests.fuzz import PROPERTY, awkward_text
from tests.helpers.documents import waiting_doc
from tests.helpers.instances import set_columns, start
from tests.helpers.pages import listed_ids
from tests.helpers.processes import publish_document

DATA = [
    {"amount": 1500, "country": "NL", "ok": True, "tags": ["a", "b"], "order": {"n": 3}},
    {"amount": 2**63 - 1, "country": "\u00e9\u6f22", "a.b": 1, "it's": "q", "": {"": 0}},
    {"amount": -1.5e308, "country": None, "tags": [], "order": {"n": [1, [2, [3]]]}},
    {"amount": "2000", "ok": "true", "nested": {"deep": {"deeper": {"deepest": 1}}}},
]
ROOTS = ["$vars", "$input", "$nodes", "$form", "$now", "$vars.order"]
OPERATORS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "=", "+", "and"]
KEYS = ["amount", "country", "ok", "tags", "order", "n", "nested", "deep", "a.b", "it's", ""]


def quoted(text: str) -> str:
    quote = "'" if "'" not in text or '"' in text else '"'
    return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


keys = st.sampled_from(KEYS) | awkward_text
segments = st.one_of(
    st.sampled_from(["amount", "country", "ok", "tags", "order", "n", "nested"]).map(".{}".format),
    keys.map(lambda key: f"[{quoted(key)}]"),
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda index: f"[{index}]"),
)
paths = st.builds(
    lambda root, parts: root + "".join(parts),
    st.sampled_from(ROOTS),
    st.lists(segments, max_size=3),
)
scalar_literals = st.one_of(
    st.integers(min_value=-(10**320), max_value=10**320).map(str),
    st.floats(allow_nan=False).map(repr),
    st.sampled_from(["1e308", "1e309", "-1e999", "0.0", "1.7976931348623157e308", str(2**1024)]),
    st.sampled_from(["true", "false", "null"]),
    awkward_text.map(quoted),
)
literals = scalar_literals | st.lists(scalar_literals, max_size=3).map(
    lambda items: "[" + ", ".join(items) + "]"
)
comparisons = st.builds(
    lambda left, op, right: f"{left} {op} {right}",
    paths | literals,
    st.sampled_from(OPERATORS),
    literals | paths,
)
expressions = st.recursive(
    comparisons,
    lambda inner: st.one_of(
        inner.map(lambda e: f"not ({e})"),
        st.builds(lambda a, b: f"{a} and {b}", inner, inner),
        st.builds(lambda a, b: f"({a}) or ({b})", inner, inner),
        inner.map(lambda e: f"({e})"),
    ),
    max_leaves=6,
)
filters = st.one_of(
    expressions,
    expressions,
    expressions,
    st.text(max_size=120),
    st.integers(min_value=1, max_value=80).map(lambda n: "(" * n + "$vars.a == 1" + ")" * n),
    st.integers(min_value=1, max_value=40).map(lambda n: " or ".join(["$vars.a == 1"] * n)),
    st.integers(min_value=400, max_value=700).map(lambda n: "$vars.a == '" + "x" * n + "'"),
)


@pytest.fixture
def with_data(engine, demo) -> list[int]:
    version = publish_document(waiting_doc(), key="orders")
    made = []
    for payload in DATA:
        made.append(start(engine, version))
        set_columns(engine, [made[-1]], vars=payload, input=payload, nodes={"n": payload})
    return made


@PROPERTY
@given(text=filters)
@example(text=f"$vars.amount > {2**1024 - 1}")  # beyond the float range, written out
@example(text="$vars.amount < -" + "9" * 309)
@example(text="$vars.amount == " + str(2**64))
@example(text="$vars.country == 'N\x00L'")
@example(text="$vars['a\x00b'] == 1")
@example(text="$vars.tags[99999999999999999999] == 'a'")
@example(text="$vars['it\\'s'] == 'q'")
@example(text="$vars['a.b'] >= 1 and $vars[''][''] == 0")
def test_every_data_filter_runs_or_is_refused_inline(operator, with_data, text):
    query = urlencode({"data": text}, errors="surrogatepass")
    response = operator.get(f"/operations/instances?{query}")
    event(f"{response.status_code}")
    assert response.status_code in (200, 422), (text, response.status_code)
    if response.status_code == 422:
        page = response.get_data(as_text=True)
        assert 'aria-describedby="data-msg"' in page, (text, page[-1500:])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"$vars.amount < {2**1024 - 1}", [0, 1, 2]),  # beyond the float range
        (f"$vars.amount > {2**1024 - 1}", []),
        (f"$vars.amount > -{2**1024 - 1}", [0, 1, 2]),
        (f"$vars.amount == {2**63 - 1}", [1]),
        (f"$vars.amount > {2**63}", []),
        ("$vars.amount < -1" + "0" * 307, [2]),
        ("$vars['a.b'] == 1 and $vars[''][''] == 0", [1]),
        ("$vars['it\\'s'] == 'q'", [1]),
        ("$vars.country == '\u00e9\u6f22'", [1]),
    ],
)
def test_numbers_beyond_the_float_range_and_odd_keys_filter_correctly(
    operator, with_data, text, expected
):
    response = operator.get("/operations/instances", query_string={"data": text})
    assert response.status_code == 200, response.get_data(as_text=True)[-1500:]
    wanted = sorted((with_data[index] for index in expected), reverse=True)
    assert listed_ids(response.get_data(as_text=True)) == wanted
