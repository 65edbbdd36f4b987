"""Defence at read time: stored learnings the *current* write gate refuses are quarantined.

The gate improves; what an older gate let through stays in the store and would keep being served. A recheck
reads every live learning (candidate or verified) and checks its text, topic, tags and source context with the
engine's gate. One refused as a secret, personal data or injection is quarantined: deprecated by the actor
``system:gate`` (so retrieval never serves it; the event says which rule) and listed in the quarantine table
with the status it had. Nothing is deleted: a person reviews the list (`learnloop gate --quarantined`) and
releases a false alarm (`--release ID`), which restores the status it had; quarantining again after a release
needs a newer gate.

The same recheck runs in the background when the gate's rule version (`gate_version`: a digest of every rule,
the size limits and the detector libraries' versions) differs from the one stored with the database — after an
upgrade, or when the app adds rules. Start-up never waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, ConflictError, NotFound
from ..governance import change_status, get, status_update
from ..models import Scope, Status
from ..stores.quarantine import QuarantineStore, StoredText
from .gate import GateVerdict, WriteGate
from .gate_version import gate_version
from .redaction import HARMFUL_KINDS

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["Quarantined", "gate_version", "quarantined", "recheck", "release", "start_background_recheck"]

log = logging.getLogger("learnloop.gate")
ACTOR = "system:gate"
_BATCH = 500


@dataclass(frozen=True, slots=True)
class Quarantined:
    tenant: str
    learning_id: int
    previous_status: str
    rule: str
    kind: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "id": self.learning_id,
            "previous_status": self.previous_status,
            "rule": self.rule,
            "kind": self.kind,
        }


def _store(engine: Engine) -> QuarantineStore:
    store = engine.quarantine
    if store is None:
        raise ConfigurationError(f"{type(engine.store).__name__} has no quarantine for the write gate")
    return store


def _verdict(gate: WriteGate, stored: StoredText) -> GateVerdict | None:
    """The first harmful verdict on one of the learning's stored texts, or None."""
    for text in (stored.text, stored.topic, stored.tags, stored.context):
        if text and text != "[]":
            verdict = gate.check(text)
            if not verdict.allowed and verdict.kind in HARMFUL_KINDS:
                return verdict
    return None


async def recheck(engine: Engine) -> list[Quarantined]:
    """Check every live learning with the engine's gate now; quarantine the refused ones (see the module)."""
    await engine.ensure_started()
    store = _store(engine)
    version = gate_version(engine.gate)
    gate = engine.gate.without("size", "empty", "unstable")
    # A person released these under this very gate: the same rules do not take them again.
    released = {
        (row.tenant, row.learning_id)
        for row in await store.listed(None, include_released=True)
        if row.released_at is not None and row.gate_version == version
    }
    found: list[Quarantined] = []
    after = 0
    while True:
        batch = await store.live_texts(after, _BATCH, unchecked_by=version)
        if not batch:
            break
        after = batch[-1].id
        accepted: list[StoredText] = []
        for stored in batch:
            if (stored.tenant, stored.id) in released:
                continue
            verdict = _verdict(gate, stored)
            if verdict is None:
                accepted.append(stored)
                continue
            rule, kind = verdict.rule or "gate", verdict.kind or "custom"
            scope = Scope(tenant=stored.tenant)
            reason = f"quarantined by the write gate (rule {rule})"
            if not await _deprecate(engine, scope, stored.id, reason):
                continue  # deleted or deprecated meanwhile
            await store.add(stored.tenant, stored.id, stored.status, rule, kind, version)
            found.append(Quarantined(stored.tenant, stored.id, stored.status, rule, kind))
            log.warning("write gate: quarantined learning %s of tenant %s (rule %s)", stored.id, stored.tenant, rule)
        # Read by this gate and accepted: retrieval need not read them again (nor a later recheck by it).
        await store.mark_checked(accepted, version)
    await store.set_gate_version(version)
    return found


async def _deprecate(engine: Engine, scope: Scope, learning_id: int, reason: str) -> bool:
    """Deprecate as the gate. Not `governance.change_status`: that checks a person's reason with the gate, and
    this reason is learnloop's own (it names the rule, which an app may have named after what it refuses)."""
    for _ in range(3):
        try:
            learning = await get(engine, scope, learning_id)
            if learning.status is Status.DEPRECATED:
                return False
            await engine.apply(scope, [status_update(learning, Status.DEPRECATED, ACTOR, reason)])
            return True
        except NotFound:
            return False
        except ConflictError:
            continue  # changed meanwhile: read it again
    return False


async def quarantined(engine: Engine, tenant: str | None = None) -> list[Quarantined]:
    """The learnings waiting for review (not released), oldest first."""
    await engine.ensure_started()
    rows = await _store(engine).listed(tenant)
    return [Quarantined(r.tenant, r.learning_id, r.previous_status, r.rule, r.kind) for r in rows]


async def release(engine: Engine, tenant: str, learning_id: int, actor: str = "person") -> Quarantined:
    """A person's decision that a quarantined learning is fine: its previous status comes back."""
    await engine.ensure_started()
    store = _store(engine)
    row = await store.get(tenant, learning_id)
    if row is None or row.released_at is not None:
        raise NotFound(f"learning {learning_id} is not quarantined", id=learning_id)
    scope = Scope(tenant=tenant)
    learning = await get(engine, scope, learning_id)
    if learning.status is Status.DEPRECATED:
        await change_status(engine, scope, learning_id, Status(row.previous_status), actor, "released from quarantine")
    await store.mark_released(tenant, learning_id, actor)
    return Quarantined(row.tenant, row.learning_id, row.previous_status, row.rule, row.kind)


async def _recheck_if_upgraded(engine: Engine) -> None:
    try:
        store = _store(engine)
        if await store.gate_version() == gate_version(engine.gate):
            return
        found = await recheck(engine)
        if found:
            log.warning(
                "write gate: the new rules quarantined %d stored learnings; see `learnloop gate --quarantined`",
                len(found),
            )
    except asyncio.CancelledError:
        raise
    except ConfigurationError:
        return  # a backend without a quarantine
    except Exception:  # a background job must not take the process down; the next start tries again
        log.exception("write gate: background recheck failed")


async def start_background_recheck(engine: Engine) -> asyncio.Task[None] | None:
    """At start-up: nothing to do when the stored rule version is this gate's; a database with no live
    learning just takes the version (a fresh file: no background write later); otherwise the recheck runs in
    the background and start-up does not wait for it."""
    store = engine.quarantine
    if store is None:
        return None
    version = gate_version(engine.gate)
    if await store.gate_version() == version:
        return None
    if not await store.live_texts(0, 1):
        await store.set_gate_version(version)
        return None
    return asyncio.get_running_loop().create_task(_recheck_if_upgraded(engine), name="learnloop-gate-recheck")
