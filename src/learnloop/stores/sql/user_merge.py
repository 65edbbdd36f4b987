"""The last step of merging two canonical users (`channels.identities`): every row the merged-away user still
has moves to the user it joined, in one transaction, so a crash leaves either all of it or none (the merge is
then resumed from its mark in `canonical_users`). A merge always moves rows to the end of the merged-away user's
chain (two links at once can make A join B while B joins C: A's rows go to C), and it waits for turns of the
merged-away user still running, which write as that user.

Learnings are not moved here: they went through the governed write one by one before (dedupe applies). What is
here is history (turns, conversations, events, tool calls), counters (summed) and the profile (summed). A row
whose key the joined user already holds (a tool template both learned, an experience file of the same path)
stays with the merged-away user, whose id remains an alias of the joined one: forgetting the joined user
forgets it too."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..identities import MergeStep
from .dialect import Connection
from .transactions import write_transaction

__all__ = ["KEPT_TABLES", "MERGED_TABLES", "finish_merge", "merge_root"]

# Rows that move whatever the joined user has: nothing keys them by user.
_MOVED = (
    "events",
    "learning_sources",
    "learning_links",
    "conversations",
    "tool_signals",
    "tool_template_examples",
    "agent_sessions",
    "agent_queue",
    "agent_messages",
    "agent_effects",
)
# Rows keyed by user and these columns: moved unless the joined user has the key already.
_MOVED_UNLESS_HELD: dict[str, tuple[str, ...]] = {
    "tool_pairs": ("tool", "query_hash"),
    "tool_templates": ("intent", "tool", "signature"),
    "tool_recoveries": ("fingerprint", "recovery_signature"),
    "agent_experience_files": ("project", "path"),
    "agent_knowledge_pages": ("project", "page_id"),
    "agent_knowledge_pointers": ("project", "pointer_id"),
    "holdback_pins": (),  # the joined user's arm stays
    "tool_privacy": (),  # the joined user's choice stays
}
# Counters keyed by user and these columns: added to the joined user's.
_SUMMED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "retrieval_counts": (("bucket",), ("retrievals", "hits")),
    "tool_stats": (("intent", "tool"), ("successes", "failures", "latency_sum", "latency_n")),
}
# Handled elsewhere or on purpose not at all: learnings (the governed write, before), API keys (a key bound to
# the merged-away user keeps acting for that id alone: linking channels grants no key more reach), the identity
# tables (moved when the link was made), the profile (below).
KEPT_TABLES = ("api_keys", "channel_identities", "link_codes", "link_attempts", "canonical_users")
MERGED_TABLES = (*_MOVED, "turns", *_MOVED_UNLESS_HELD, *_SUMMED, "user_profiles", "user_patterns")


# A turn still running (or whose work has not run) writes as the user it began with: its conversation stays
# with that user, and the merge stays unfinished, until it is done (a later pass moves it and what it learned).
_BUSY_TURN = "status IN ('open', 'finished')"


def merge_root(conn: Connection, tenant: str, user: str) -> str:
    """The end of `user`'s chain of merges (itself when it joined nobody). Links only join users that are ends
    of their chains (identities and codes move to the end when a merge begins), so a chain has no cycle; the
    bound only guards against a corrupted table."""
    seen = [user]
    while len(seen) < 64:
        row = conn.execute(
            "SELECT merged_into FROM canonical_users WHERE tenant = ? AND user_id = ?", (tenant, seen[-1])
        ).fetchone()
        if row is None or row[0] is None or row[0] in seen:
            break
        seen.append(str(row[0]))
    return seen[-1]


def finish_merge(
    conn: Connection, tenant: str, from_user: str, into: str, half_life: float, kept: Sequence[int] = ()
) -> MergeStep:
    owners = (into, tenant, from_user)
    moved = 0
    with write_transaction(conn):
        state = conn.execute(
            "SELECT merged_into, merge_done FROM canonical_users WHERE tenant = ? AND user_id = ?", (tenant, from_user)
        ).fetchone()
        if state is None or state[0] is None or int(state[1]):
            return MergeStep(done=True)  # finished already (or never begun): a resumed merge does nothing twice
        target = merge_root(conn, tenant, from_user)
        if target != into:
            # `into` joined another user since this merge began. Whatever this merge already gave it (a learning
            # saved after its own merge had finished) must follow: its merge is open again.
            _reopen_chain(conn, tenant, from_user, target)
            return MergeStep(done=False, target=target)
        if _live_learnings(conn, tenant, from_user, kept):
            return MergeStep(done=False, target=into)  # learned meanwhile (a turn that was running): move it first
        for table in _MOVED:
            busy = f" AND NOT ({_BUSY_TURN})" if table == "conversations" else ""
            moved += conn.execute(
                f"UPDATE {table} SET user_id = ? WHERE tenant = ? AND user_id = ?{busy}", owners
            ).rowcount
        moved += _move_unless_held(conn, "turns", ("session", "turn"), owners)
        # A turn of the same session and number as one of the joined user's is history too: it is kept, in a
        # session of its own name.
        moved += conn.execute(
            "UPDATE turns SET user_id = ?, session = session || '~' || ? WHERE tenant = ? AND user_id = ?",
            (into, from_user, tenant, from_user),
        ).rowcount
        for table, columns in _MOVED_UNLESS_HELD.items():
            moved += _move_unless_held(conn, table, columns, owners)
        for table, (columns, counters) in _SUMMED.items():
            moved += _sum(conn, table, columns, counters, owners)
        moved += _merge_profile(conn, owners, half_life)
        waiting = conn.execute(
            f"SELECT 1 FROM conversations WHERE tenant = ? AND user_id = ? AND {_BUSY_TURN} LIMIT 1",
            (tenant, from_user),
        ).fetchone()
        if waiting is None:
            conn.execute(
                "UPDATE canonical_users SET merge_done = 1 WHERE tenant = ? AND user_id = ?", (tenant, from_user)
            )
    done = waiting is None
    return MergeStep(done=done, moved=moved, target=into, waiting=not done, finished=done)


def _reopen_chain(conn: Connection, tenant: str, from_user: str, target: str) -> None:
    seen = [from_user]
    while len(seen) < 64:
        row = conn.execute(
            "SELECT merged_into FROM canonical_users WHERE tenant = ? AND user_id = ?", (tenant, seen[-1])
        ).fetchone()
        if row is None or row[0] is None or row[0] in (target, *seen):
            return
        seen.append(str(row[0]))
        conn.execute("UPDATE canonical_users SET merge_done = 0 WHERE tenant = ? AND user_id = ?", (tenant, seen[-1]))


def _live_learnings(conn: Connection, tenant: str, user: str, kept: Sequence[int]) -> bool:
    rows = conn.execute(
        "SELECT id FROM learnings WHERE tenant = ? AND user_id = ? AND status <> 'deprecated'", (tenant, user)
    ).fetchall()
    left = set(kept)
    return any(int(r[0]) not in left for r in rows)


def _held(table: str, columns: Sequence[str]) -> str:
    same = "".join(f" AND o.{c} = {table}.{c}" for c in columns)
    return f"EXISTS (SELECT 1 FROM {table} AS o WHERE o.tenant = {table}.tenant AND o.user_id = ?{same})"


def _move_unless_held(conn: Connection, table: str, columns: Sequence[str], owners: tuple[str, str, str]) -> int:
    into, tenant, from_user = owners
    return conn.execute(
        f"UPDATE {table} SET user_id = ? WHERE tenant = ? AND user_id = ? AND NOT {_held(table, columns)}",
        (into, tenant, from_user, into),
    ).rowcount


def _sum(
    conn: Connection, table: str, columns: Sequence[str], counters: Sequence[str], owners: tuple[str, str, str]
) -> int:
    into, tenant, from_user = owners
    same = " AND ".join(f"o.{c} = {table}.{c}" for c in columns)
    added = ", ".join(
        f"{c} = {table}.{c} + (SELECT o.{c} FROM {table} AS o WHERE o.tenant = ? AND o.user_id = ? AND {same})"
        for c in counters
    )
    params: list[str] = []
    for _ in counters:
        params += [tenant, from_user]
    summed = conn.execute(
        f"UPDATE {table} SET {added} WHERE tenant = ? AND user_id = ? AND "
        f"EXISTS (SELECT 1 FROM {table} AS o WHERE o.tenant = ? AND o.user_id = ? AND {same})",
        (*params, tenant, into, tenant, from_user),
    ).rowcount
    conn.execute(
        f"DELETE FROM {table} WHERE tenant = ? AND user_id = ? AND {_held(table, columns)}",
        (tenant, from_user, into),
    )
    return summed + _move_unless_held(conn, table, columns, owners)


def _merge_profile(conn: Connection, owners: tuple[str, str, str], half_life: float) -> int:
    into, tenant, from_user = owners
    mine = conn.execute(
        "SELECT interactions, overrides, created_at, updated_at FROM user_profiles WHERE tenant = ? AND user_id = ?",
        (tenant, from_user),
    ).fetchone()
    theirs = conn.execute(
        "SELECT interactions, overrides, created_at, updated_at FROM user_profiles WHERE tenant = ? AND user_id = ?",
        (tenant, into),
    ).fetchone()
    moved = 0
    if mine is not None and theirs is None:
        moved += conn.execute("UPDATE user_profiles SET user_id = ? WHERE tenant = ? AND user_id = ?", owners).rowcount
    elif mine is not None:
        # What the joined user set by hand wins; the merged-away user's settings fill what it left unset.
        overrides = {**json.loads(mine[1]), **json.loads(theirs[1])}
        conn.execute(
            "UPDATE user_profiles SET interactions = ?, overrides = ?, created_at = ?, updated_at = ? "
            "WHERE tenant = ? AND user_id = ?",
            (
                int(mine[0]) + int(theirs[0]),
                json.dumps(overrides),
                min(float(mine[2]), float(theirs[2])),
                max(float(mine[3]), float(theirs[3])),
                tenant,
                into,
            ),
        )
        conn.execute("DELETE FROM user_profiles WHERE tenant = ? AND user_id = ?", (tenant, from_user))
        moved += 1
    for kind, value, weight, count, first_at, last_at in conn.execute(
        "SELECT kind, value, weight, count, first_at, last_at FROM user_patterns WHERE tenant = ? AND user_id = ?",
        (tenant, from_user),
    ).fetchall():
        held = conn.execute(
            "SELECT weight, last_at FROM user_patterns WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
            (tenant, into, kind, value),
        ).fetchone()
        if held is None:
            conn.execute(
                "UPDATE user_patterns SET user_id = ? WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
                (*owners, kind, value),
            )
        else:
            # Both weights decayed to the later of the two times, then added: the frequency of both histories.
            at = max(float(last_at), float(held[1]))
            total = float(weight) * 0.5 ** ((at - float(last_at)) / half_life) + float(held[0]) * 0.5 ** (
                (at - float(held[1])) / half_life
            )
            conn.execute(
                "UPDATE user_patterns SET weight = ?, count = count + ?, last_at = ?, "
                "first_at = CASE WHEN first_at < ? THEN first_at ELSE ? END "
                "WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
                (total, int(count), at, float(first_at), float(first_at), tenant, into, kind, value),
            )
            conn.execute(
                "DELETE FROM user_patterns WHERE tenant = ? AND user_id = ? AND kind = ? AND value = ?",
                (tenant, from_user, kind, value),
            )
        moved += 1
    return moved
