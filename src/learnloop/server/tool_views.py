"""Summaries of the tool layer shared by the `/api/tools/evidence` endpoints and the `/tools` page: learned
evidence per tool and success rates per intent, computed from what `loop.tools` returns for one scope."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..tools import ToolIntelligence
from ..tools.models import LearnedPair, QueryTemplate, RecoveryPattern, ToolInfo, ToolStat
from .tool_schemas import ToolEvidenceOut

__all__ = ["PAIR_LIMIT", "IntentRate", "ToolsOverview", "evidence_for", "intent_rates", "overview"]

# Learned pairs read for a summary. Each (user, tool) keeps at most 64, strongest first, so this covers a
# tenant's whole picture until it is large; past that the weakest pairs are left out of the counts.
PAIR_LIMIT = 20_000
_EXAMPLES = 3


@dataclass(frozen=True)
class IntentRate:
    intent: str
    successes: int
    failures: int
    success_rate: float
    tools: list[ToolStat]  # best first


@dataclass
class ToolsOverview:
    """Everything the `/tools` page shows for one scope (a user, or the whole tenant)."""

    catalog: list[ToolInfo] = field(default_factory=list)
    evidence: list[ToolEvidenceOut] = field(default_factory=list)
    templates: list[QueryTemplate] = field(default_factory=list)
    recoveries: list[RecoveryPattern] = field(default_factory=list)
    intents: list[IntentRate] = field(default_factory=list)

    @property
    def learned_anything(self) -> bool:
        return any(e.pairs or e.successes or e.failures for e in self.evidence)


def _summary(tool: ToolInfo, pairs: Sequence[LearnedPair], stats: Sequence[ToolStat]) -> ToolEvidenceOut:
    successes = sum(s.successes for s in stats)
    failures = sum(s.failures for s in stats)
    examples: list[str] = []
    for pair in sorted(pairs, key=lambda p: -p.weight):
        # `query` is stored only while the pair's user has privacy "full"; a stricter choice erases it.
        if pair.query and pair.query not in examples:
            examples.append(pair.query)
        if len(examples) >= _EXAMPLES:
            break
    weights = [p.weight for p in pairs]
    return ToolEvidenceOut(
        tool=tool.name,
        server=tool.server,
        description=tool.description,
        pairs=len(pairs),
        uses=sum(p.uses for p in pairs),
        confidence=round(max(weights, default=0.0), 4),
        mean_confidence=round(sum(weights) / len(weights), 4) if weights else 0.0,
        strengths=dict(Counter(p.strength for p in pairs)),
        examples=examples,
        successes=successes,
        failures=failures,
        success_rate=round(successes / (successes + failures), 4) if successes + failures else None,
    )


async def evidence_for(
    tools: ToolIntelligence,
    user: str | None,
    catalog: Sequence[ToolInfo],
    *,
    tool: str | None = None,
    stats: Sequence[ToolStat] | None = None,
) -> list[ToolEvidenceOut]:
    """Learned evidence for each tool of `catalog` (or only `tool`), most learned about first."""
    pairs = await tools.learned_pairs(user=user, tool=tool, limit=PAIR_LIMIT)
    if stats is None:
        stats = await tools.stats(user=user)
    pairs_of: dict[str, list[LearnedPair]] = defaultdict(list)
    for pair in pairs:
        pairs_of[pair.tool].append(pair)
    stats_of: dict[str, list[ToolStat]] = defaultdict(list)
    for stat in stats:
        stats_of[stat.tool].append(stat)
    chosen = [t for t in catalog if tool is None or t.name == tool]
    found = [_summary(t, pairs_of[t.name], stats_of[t.name]) for t in chosen]
    return sorted(found, key=lambda e: (-e.pairs, -e.uses, -(e.successes + e.failures), e.tool))


def intent_rates(stats: Sequence[ToolStat]) -> list[IntentRate]:
    """Success rates per intent over every tool used for it, most used intent first."""
    by_intent: dict[str, list[ToolStat]] = defaultdict(list)
    for stat in stats:
        by_intent[stat.intent].append(stat)
    rates = []
    for intent, group in by_intent.items():
        successes = sum(s.successes for s in group)
        failures = sum(s.failures for s in group)
        total = successes + failures
        ranked = sorted(group, key=lambda s: (-s.success_rate, -s.successes, s.tool))
        rates.append(IntentRate(intent, successes, failures, successes / total if total else 0.0, ranked))
    return sorted(rates, key=lambda r: (-(r.successes + r.failures), r.intent))


async def overview(tools: ToolIntelligence, user: str | None) -> ToolsOverview:
    catalog = await tools.catalog()
    stats = await tools.stats(user=user)
    return ToolsOverview(
        catalog=catalog,
        evidence=await evidence_for(tools, user, catalog, stats=stats),
        templates=await tools.templates(user=user),
        recoveries=await tools.recovery_patterns(user=user),
        intents=intent_rates(stats),
    )
