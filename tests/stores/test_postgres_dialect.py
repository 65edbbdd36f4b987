"""The shared statements in psycopg's placeholder style (`stores.postgres.dialect.translate`): no server needed."""

from __future__ import annotations

import pytest

from learnloop.stores.postgres.dialect import translate


@pytest.mark.parametrize(
    ("shared", "psycopg_style"),
    [
        (
            "SELECT id FROM learnings WHERE tenant = ? AND id IN (?, ?)",
            "SELECT id FROM learnings WHERE tenant = %s AND id IN (%s, %s)",
        ),
        (
            "WHERE id = ? AND +tenant = ? AND +user_id IN (?, '')",
            "WHERE id = %s AND tenant = %s AND user_id IN (%s, '')",
        ),
        ("SET hits = hits + 1, streak = streak + ?", "SET hits = hits + 1, streak = streak + %s"),
        ("SELECT '?' || ?, 'it''s ?', '100%'", "SELECT '?' || %s, 'it''s ?', '100%%'"),
        ("WHERE text LIKE ? ESCAPE '\\' AND ratio > 5 % 2", "WHERE text LIKE %s ESCAPE '\\' AND ratio > 5 %% 2"),
    ],
)
def test_placeholders_hints_and_literals(shared: str, psycopg_style: str) -> None:
    assert translate(shared) == psycopg_style
