"""Sets of input values an entry accepts: number intervals, text, booleans and null.

What the overlap, reachability and gap checks compute with. Text is a finite set or the
complement of one; numbers a union of intervals (whole numbers for integer columns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

INF = math.inf
#: An interval: (low, low included, high, high included).
Interval = tuple[float, bool, float, bool]


def _normal(intervals: list[Interval], whole: bool) -> tuple[Interval, ...]:
    """Sorted, merged, non-empty intervals; for whole numbers, bounds snap to integers."""
    cleaned: list[Interval] = []
    for low, low_in, high, high_in in intervals:
        if whole and math.isfinite(low):
            low = math.floor(low) + 1 if not low_in and low == math.floor(low) else math.ceil(low)
            low_in = True
        if whole and math.isfinite(high):
            high = (
                math.ceil(high) - 1 if not high_in and high == math.ceil(high) else math.floor(high)
            )
            high_in = True
        if low < high or (low == high and low_in and high_in):
            cleaned.append((low, low_in, high, high_in))
    cleaned.sort(key=lambda i: (i[0], not i[1]))
    merged: list[Interval] = []
    for interval in cleaned:
        if merged:
            low, low_in, high, high_in = merged[-1]
            touches = interval[0] < high or (interval[0] == high and (high_in or interval[1]))
            if whole and math.isfinite(high) and interval[0] == high + 1:
                touches = True
            if touches:
                if interval[2] > high or (interval[2] == high and interval[3]):
                    merged[-1] = (
                        low,
                        low_in,
                        interval[2],
                        interval[3] or (interval[2] == high and high_in),
                    )
                continue
        merged.append(interval)
    return tuple(merged)


@dataclass(frozen=True)
class ValueSet:
    """Values an entry accepts. ``texts`` lists text values; ``cotext`` means all text but those."""

    numbers: tuple[Interval, ...] = ()
    texts: frozenset[str] = frozenset()
    cotext: bool = False
    booleans: frozenset[bool] = frozenset()
    null: bool = False
    whole: bool = field(default=False, compare=False)

    @classmethod
    def everything(cls, whole: bool = False) -> ValueSet:
        return cls(
            ((-INF, False, INF, False),), frozenset(), True, frozenset({True, False}), True, whole
        )

    @classmethod
    def interval(
        cls, low: float, low_in: bool, high: float, high_in: bool, whole: bool = False
    ) -> ValueSet:
        return cls(_normal([(low, low_in, high, high_in)], whole), whole=whole)

    @classmethod
    def of(cls, value: object, whole: bool = False) -> ValueSet | None:
        """The set holding one literal value, or None for values not analysed (dates, lists)."""
        if value is None:
            return cls(null=True, whole=whole)
        if isinstance(value, bool):
            return cls(booleans=frozenset({value}), whole=whole)
        if isinstance(value, int | float):
            return cls.interval(value, True, value, True, whole)
        if isinstance(value, str):
            return cls(texts=frozenset({value}), whole=whole)
        return None

    def union(self, other: ValueSet) -> ValueSet:
        if self.cotext and other.cotext:
            texts, cotext = self.texts & other.texts, True
        elif self.cotext or other.cotext:
            excluded, included = (
                (self.texts, other.texts) if self.cotext else (other.texts, self.texts)
            )
            texts, cotext = excluded - included, True
        else:
            texts, cotext = self.texts | other.texts, False
        whole = self.whole or other.whole
        return ValueSet(
            _normal([*self.numbers, *other.numbers], whole),
            texts,
            cotext,
            self.booleans | other.booleans,
            self.null or other.null,
            whole,
        )

    def complement(self) -> ValueSet:
        gaps: list[Interval] = []
        low, low_in = -INF, False
        for start, start_in, end, end_in in self.numbers:
            gaps.append((low, low_in, start, not start_in))
            low, low_in = end, not end_in
        gaps.append((low, low_in, INF, False))
        return ValueSet(
            _normal(gaps, self.whole),
            self.texts,
            not self.cotext,
            frozenset({True, False}) - self.booleans,
            not self.null,
            self.whole,
        )

    def intersection(self, other: ValueSet) -> ValueSet:
        numbers = []
        for low, low_in, high, high_in in self.numbers:
            for other_low, other_low_in, other_high, other_high_in in other.numbers:
                start = max((low, not low_in), (other_low, not other_low_in))
                end = min((high, high_in), (other_high, other_high_in))
                numbers.append((start[0], not start[1], end[0], end[1]))
        if self.cotext and other.cotext:
            texts, cotext = self.texts | other.texts, True
        elif self.cotext or other.cotext:
            excluded, included = (
                (self.texts, other.texts) if self.cotext else (other.texts, self.texts)
            )
            texts, cotext = included - excluded, False
        else:
            texts, cotext = self.texts & other.texts, False
        whole = self.whole or other.whole
        return ValueSet(
            _normal(numbers, whole),
            texts,
            cotext,
            self.booleans & other.booleans,
            self.null and other.null,
            whole,
        )

    def is_empty(self) -> bool:
        texts_empty = not self.cotext and not self.texts
        return not self.numbers and texts_empty and not self.booleans and not self.null

    def within(self, other: ValueSet) -> bool:
        return self.intersection(other.complement()).is_empty()

    def example(self) -> str:
        """Describe some values of a non-empty set, for a gap warning."""
        parts = []
        for low, low_in, high, high_in in self.numbers[:2]:
            if low == high:
                parts.append(_number(low))
            elif low == -INF:
                parts.append(f"{'<=' if high_in else '<'} {_number(high)}")
            elif high == INF:
                parts.append(f"{'>=' if low_in else '>'} {_number(low)}")
            else:
                opening, closing = "[" if low_in else "]", "]" if high_in else "["
                parts.append(f"{opening}{_number(low)}..{_number(high)}{closing}")
        parts += [str(value).lower() for value in sorted(self.booleans)]
        parts += [f'"{text}"' for text in sorted(self.texts)[:3]] if not self.cotext else []
        return " or ".join(parts)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
