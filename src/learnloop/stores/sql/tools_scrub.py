"""Reducing a tenant's shared tool knowledge to call shapes (`ToolStore.scrub_shared`).

Shared rows (user '') are read by every user of the tenant. Since `learnloop.tools.shapes` they are written
as shapes; this pass rewrites those written before — templates and recovery patterns that kept the first
caller's argument values, insights copied from them — and those shaped under a gate that has been made
stricter since. Only the values change: signatures and fingerprints (hashes of the call pattern, which the
key parameters of the configuration in force define) are left as they are, so the pass never moves a row
onto another one.

A first pass only reads; the write lock is taken only if something has to change, so the common case (a
clean tenant, checked once per process) costs a read.
"""

from __future__ import annotations

import json
from typing import Any

from ...tools.shapes import Redactor, Shaper
from ..tool_rules import shared_insight, shared_recovery, shared_template_params
from .dialect import Connection
from .transactions import write_transaction

__all__ = ["anonymise_failures", "scrub_shared"]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def _template_changes(conn: Connection, tenant: str, shaper: Shaper) -> list[tuple[str, int]]:
    """(params, id) of the shared templates whose stored parameters are not what they may keep."""
    changes = []
    for template_id, tool, stored, origin in conn.execute(
        "SELECT id, tool, params, origin FROM tool_templates WHERE tenant = ? AND user_id = ''", (tenant,)
    ).fetchall():
        params = json.loads(stored)
        kept = shared_template_params(tool, params, origin, shaper)
        if kept != params:
            changes.append((_dumps(kept), template_id))
    return changes


def _recovery_changes(conn: Connection, tenant: str, shaper: Shaper) -> list[tuple[str, str, str, int]]:
    """(failed_params, recovery_params, description, id) of the shared recovery patterns to rewrite."""
    changes = []
    for recovery_id, failed_tool, failed_raw, tool, fixed_raw, description in conn.execute(
        "SELECT id, failed_tool, failed_params, recovery_tool, recovery_params, description FROM tool_recoveries "
        "WHERE tenant = ? AND user_id = ''",
        (tenant,),
    ).fetchall():
        stored = (json.loads(failed_raw), json.loads(fixed_raw), description)
        kept = shared_recovery(failed_tool, stored[0], tool, stored[1], shaper)
        if kept != stored:
            changes.append((_dumps(kept[0]), _dumps(kept[1]), kept[2], recovery_id))
    return changes


def _insight_changes(conn: Connection, tenant: str, shaper: Shaper) -> list[tuple[str, str, str, str]]:
    seeds = {
        r[0]
        for r in conn.execute(
            "SELECT signature FROM tool_templates WHERE tenant = ? AND user_id = '' AND origin = 'seed'", (tenant,)
        )
    }
    lessons = {
        r[0]
        for r in conn.execute("SELECT description FROM tool_recoveries WHERE tenant = ? AND user_id = ''", (tenant,))
    }
    changes = []
    for kind, key, stored in conn.execute(
        "SELECT type, key, value FROM tool_insights WHERE tenant = ? "
        "AND type IN ('best_practice', 'parameter_values', 'common_mistake')",
        (tenant,),
    ).fetchall():
        value = json.loads(stored)
        kept = shared_insight(kind, key, value, shaper, seeds, lessons) if isinstance(value, dict) else value
        if kept != value:
            changes.append((json.dumps(kept, ensure_ascii=False, default=str, sort_keys=True), tenant, kind, key))
    return changes


def _pending(conn: Connection, tenant: str, shaper: Shaper) -> bool:
    return bool(
        _template_changes(conn, tenant, shaper)
        or _recovery_changes(conn, tenant, shaper)
        or _insight_changes(conn, tenant, shaper)
    )


def scrub_shared(conn: Connection, tenant: str, shaper: Shaper) -> int:
    if not _pending(conn, tenant, shaper):
        return 0
    with write_transaction(conn):
        # Computed again under the write lock: another process may have written since the first look.
        templates = _template_changes(conn, tenant, shaper)
        conn.executemany("UPDATE tool_templates SET params = ? WHERE id = ?", templates)
        recoveries = _recovery_changes(conn, tenant, shaper)
        conn.executemany(
            "UPDATE tool_recoveries SET failed_params = ?, recovery_params = ?, description = ? WHERE id = ?",
            recoveries,
        )
        # After the recoveries: a mistake's lessons are the descriptions the patterns have now.
        insights = _insight_changes(conn, tenant, shaper)
        conn.executemany("UPDATE tool_insights SET value = ? WHERE tenant = ? AND type = ? AND key = ?", insights)
    return len(templates) + len(recoveries) + len(insights)


def anonymise_failures(conn: Connection, tenant: str, user: str) -> int:
    """Seed 001 §8.10: a forgotten user's failed calls stay for system learning (common mistakes, valid values,
    lessons) with nothing of the user left: no user or session, no query, the arguments reduced to their shape
    (names, types, the API's constants) and no error text — an error message quotes the user's own values
    ("no customer Alice Liddell") that no gate can tell from the API's words; the error type stays. Inside
    the caller's transaction; the rest of the user's signals are deleted after it."""
    shaper = Shaper(Redactor.default())
    rows = conn.execute(
        "SELECT id, tool, arguments FROM tool_signals WHERE tenant = ? AND user_id = ? AND kind = 'call' AND ok = 0",
        (tenant, user),
    ).fetchall()
    for signal_id, tool, arguments in rows:
        shape = shaper.shape(str(tool or ""), json.loads(arguments) if arguments else {})
        conn.execute(
            "UPDATE tool_signals SET user_id = '', session = '', arguments = ?, error = NULL, query_hash = NULL, "
            "query_text = NULL, embedding = NULL, embedding_model = NULL, weight = 0, applied = 1 WHERE id = ?",
            (_dumps(shape), signal_id),
        )
    return len(rows)
