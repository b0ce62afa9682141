"""Content mode's per-page work done in fewer steps gives what the plain steps give: the blocks
of a split at runs of marks, and the model's scores summed with numpy."""

from __future__ import annotations

import math
import random
from dataclasses import astuple
from operator import mul

import pytest
from conftest import shared_file

from warcdeboil.page.content import (
    _LINE_MARK,
    _LINK_CLOSE,
    _LINK_OPEN,
    _OPEN_MARK,
    Block,
    _weighted_sum,
    feature_columns,
    load_model,
    split_blocks,
)
from warcdeboil.page.dom import BLOCK_SPLIT, CLOSE, ROLE_CLOSE, ROLE_OPEN, analyse
from warcdeboil.page.html import html_page
from warcdeboil.warc.reader import iter_records


def _split_at_each_mark(marked: str) -> list[tuple[object, ...]]:
    """The blocks as a split at every single block mark finds them (every text between two
    marks looked at, blank or not): the reference split_blocks must agree with."""
    parts = BLOCK_SPLIT.split(marked)
    blocks = []
    stack, next_id, kind, roles, in_link = [0], 1, 0, 0, False
    depths = [0] * len(ROLE_OPEN)
    for i in range(0, len(parts), 2):
        text = (_LINK_OPEN if in_link else "") + parts[i]
        plain = " ".join(
            text.replace(_LINK_OPEN, " ").replace(_LINK_CLOSE, " ").replace("\ufddc", " ")
            .replace("\ufddf", " ").replace("\ufde0", " ").split())
        if plain:
            chars = len(plain) - plain.count(" ")
            linked = sum(len(run) - run.count(" ") for run in _linked_runs(text))
            first = text.startswith((_LINK_OPEN, " " + _LINK_OPEN))
            blocks.append(astuple(Block(plain, kind, chars, min(linked, chars),
                                        tuple(stack[-128:]), text, roles, first)))
        if _LINK_OPEN in text:
            in_link = text.rfind(_LINK_OPEN) > text.rfind(_LINK_CLOSE)
        mark = parts[i + 1] if i + 1 < len(parts) else ""
        if mark in (_LINE_MARK, _OPEN_MARK, CLOSE):
            kind = 0
            if mark == _OPEN_MARK:
                stack.append(next_id)
                next_id += 1
            elif mark == CLOSE and len(stack) > 1:
                stack.pop()
        elif mark in ROLE_OPEN:
            role = ROLE_OPEN.index(mark)
            depths[role] += 1
            roles |= 1 << role
        elif mark in ROLE_CLOSE:
            role = ROLE_CLOSE.index(mark)
            if depths[role]:
                depths[role] -= 1
                if not depths[role]:
                    roles &= ~(1 << role)
        elif mark:
            kind = {chr(0xFDD5 + level): level + 1 for level in range(6)}.get(
                mark, {"\ufddb": 7, "\ufddd": 8, "\ufdde": 9}.get(mark, 0))
    return blocks


def _linked_runs(text: str) -> list[str]:
    """The texts after each link-open mark up to the next link mark."""
    runs = []
    for piece in text.split(_LINK_OPEN)[1:]:
        runs.append(piece.split(_LINK_CLOSE, 1)[0])
    return runs


# Blank texts between marks (spaces only, or a no-break space, which is whitespace to
# str.split but no part of a run), links open across marks, roles and kinds set inside runs.
EDGE_CASES = [
    "",
    " ",
    _OPEN_MARK,
    f"a{_OPEN_MARK} {CLOSE}b",
    f" {_LINK_OPEN}x{_OPEN_MARK} y{_LINK_CLOSE} {_LINE_MARK} z",
    f"{_OPEN_MARK}  {_OPEN_MARK}   {CLOSE} {CLOSE}",
    f"x {_LINK_OPEN}{_OPEN_MARK} {_OPEN_MARK} {_LINK_CLOSE} y",
    f"\xa0{_OPEN_MARK} \xa0 {CLOSE} {ROLE_OPEN[0]} q {ROLE_CLOSE[0]}",
    f"{ROLE_OPEN[1]} \ufdd6 {ROLE_OPEN[0]}{_OPEN_MARK} heading {ROLE_CLOSE[0]} {CLOSE} after",
    f"{CLOSE} {CLOSE} text {ROLE_CLOSE[2]} more \ufddb item \ufddb  \ufddb last",
]


@pytest.mark.parametrize("marked", EDGE_CASES)
def test_split_blocks_is_a_split_at_each_mark(marked: str) -> None:
    assert [astuple(b) for b in split_blocks(marked)] == _split_at_each_mark(marked)


def test_split_blocks_of_real_pages_is_a_split_at_each_mark() -> None:
    # The first 150 pages of CleanEval, marked as content mode marks them.
    path = shared_file("eval", "cleaneval.warc.gz")
    checked = 0
    for record in iter_records(str(path)):
        page = html_page(record) if record.error is None else None
        if page is None:
            continue
        marked = analyse(page.markup, structure=True).marked.decode("utf-8", "surrogatepass")
        assert [astuple(b) for b in split_blocks(marked)] == _split_at_each_mark(marked)
        checked += 1
        if checked == 150:
            break
    assert checked == 150


def _row_sums(columns: list[list[float]], weights: tuple[float, ...], bias: float) -> list[float]:
    """Per block, ``bias`` plus each term in column order, in Python floats."""
    return [sum(map(mul, row, weights), bias) for row in zip(*columns, strict=True)]


def test_weighted_sum_is_the_python_sum_to_the_last_bit() -> None:
    # Magnitudes far apart make the order of additions show in the last bits.
    rng = random.Random(7)
    n, width = 300, 30
    columns = [[rng.choice([0.0, 1.0, -0.0]) * 10 ** rng.randint(-12, 12) * rng.random()
                for _ in range(n)] for _ in range(width)]
    weights = tuple(rng.uniform(-50, 50) * 10 ** rng.randint(-6, 6) for _ in range(width))
    bias = -3.25
    got = _weighted_sum(columns, weights, bias)
    assert list(map(float.hex, got)) == list(map(float.hex, _row_sums(columns, weights, bias)))


def test_weighted_sum_of_real_pages_is_the_python_sum() -> None:
    path = shared_file("eval", "dragnet.warc.gz")
    model = load_model()
    checked = 0
    for record in iter_records(str(path)):
        page = html_page(record) if record.error is None else None
        if page is None:
            continue
        blocks = split_blocks(
            analyse(page.markup, structure=True).marked.decode("utf-8", "surrogatepass"))
        if not blocks:
            continue
        columns = feature_columns(blocks)
        got = _weighted_sum(columns, model.weights, model.bias)
        assert list(map(float.hex, got)) == list(
            map(float.hex, _row_sums(columns, model.weights, model.bias)))
        checked += 1
        if checked == 100:
            break
    assert checked == 100


def test_weighted_sum_leaves_zero_columns_and_zero_weights_out_exactly() -> None:
    # A column of zeros under an infinite weight is not left out (0 * inf is NaN), as before.
    columns = [[0.0, 0.0], [1.5, -2.0], [0.0, 0.0]]
    assert _weighted_sum(columns, (4.0, 0.5, 0.0), 1.0) == [1.75, 0.0]
    assert all(map(math.isnan, _weighted_sum(columns, (math.inf, 0.5, 0.0), 1.0)))
    assert _weighted_sum([[0.0, 0.0]], (2.0,), -1.5) == [-1.5, -1.5]
