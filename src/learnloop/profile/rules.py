"""Reading one message the way seed 001 §6.1's PatternLearner does: a coarse intent (the query type), a fine
intent built from it, the metrics and time range it names, and how complex it is.

The words are configuration: `IntentRules` holds one vocabulary's (the default is seed 001's shop analytics,
in English); an app gives its own per namespace (`loop.profiles.configure`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["DEFAULT_RULES", "OTHER", "Complexity", "IntentRules", "QueryAnalysis", "fine_intent", "ranks"]

Complexity = Literal["simple", "moderate", "complex"]
OTHER = "other"


@dataclass(frozen=True)
class QueryAnalysis:
    coarse: str
    fine: str
    complexity: Complexity
    metrics: tuple[str, ...] = ()
    time_range: str | None = None


def _words(*terms: str) -> tuple[str, ...]:
    return terms


@dataclass(frozen=True)
class IntentRules:
    """A vocabulary's words. Keys are the names the profile shows; values are the words (or phrases) that mean
    them, matched as whole words, case-insensitively. Query types are tried in order: the first that matches is
    the coarse intent (`comparison` first, as a comparison of revenue is a comparison; then what is
    ranked or counted before the measure: "top products by revenue" is about products)."""

    query_types: Mapping[str, Sequence[str]]
    metrics: Mapping[str, Sequence[str]]
    # (pattern, name) in order: the first that matches names the time range.
    time_ranges: Sequence[tuple[str, str]]
    comparison_type: str = "comparison"
    ranking_words: Sequence[str] = _words("top", "best", "worst", "highest", "lowest", "most", "least")
    joining_words: Sequence[str] = _words("and", "also", "plus", "as well as")
    long_query_words: int = 20
    _compiled: dict[str, re.Pattern[str]] = field(default_factory=dict, compare=False, repr=False)

    def _pattern(self, key: str, terms: Sequence[str]) -> re.Pattern[str]:
        found = self._compiled.get(key)
        if found is None:
            alternatives = "|".join(re.escape(t.lower()) for t in sorted(terms, key=len, reverse=True))
            found = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)" if alternatives else r"(?!x)x")
            self._compiled[key] = found
        return found

    def metrics_in(self, text: str) -> tuple[str, ...]:
        """The metrics `text` names, in the order it names them."""
        lowered = text.lower()
        found: list[tuple[int, str]] = []
        for name, terms in self.metrics.items():
            match = self._pattern(f"m:{name}", terms).search(lowered)
            if match:
                found.append((match.start(), name))
        return tuple(name for _, name in sorted(found))

    def time_range_in(self, text: str) -> str | None:
        lowered = text.lower()
        for pattern, name in self.time_ranges:
            compiled = self._compiled.get(f"t:{pattern}")
            if compiled is None:
                compiled = self._compiled.setdefault(f"t:{pattern}", re.compile(pattern))
            if compiled.search(lowered):
                return name
        return None

    def query_type_of(self, text: str) -> str:
        lowered = text.lower()
        for name, terms in self.query_types.items():
            if self._pattern(f"q:{name}", terms).search(lowered):
                return name
        return OTHER

    def analyse(self, text: str) -> QueryAnalysis:
        coarse = self.query_type_of(text)
        metrics = self.metrics_in(text)
        time_range = self.time_range_in(text)
        lowered = text.lower()
        ranking = ranks(self, text)
        comparison = coarse == self.comparison_type
        fine = fine_intent(coarse, ranking=ranking, metrics=metrics, time_range=time_range)
        signals = sum(
            (
                len(metrics) > 1,
                comparison,
                bool(self._pattern("joining", self.joining_words).search(lowered)),
                len(text.split()) > self.long_query_words,
            )
        )
        complexity: Complexity = "simple" if signals == 0 else "moderate" if signals <= 2 else "complex"
        return QueryAnalysis(coarse, fine, complexity, metrics, time_range)


def fine_intent(coarse: str, *, ranking: bool, metrics: Sequence[str], time_range: str | None) -> str:
    """Seed 001 §6.1's fine intent: coarse, ranking, the first metric, the time range (a comparison's coarse
    intent already says it is one). "products_ranking_revenue_last_30_days"."""
    parts = [coarse]
    if ranking:
        parts.append("ranking")
    if metrics and metrics[0] != coarse:
        parts.append(metrics[0])
    if time_range:
        parts.append(time_range)
    return "_".join(parts)


def ranks(rules: IntentRules, text: str) -> bool:
    return bool(rules._pattern("ranking", rules.ranking_words).search(text.lower()))


# Seed 001's shop analytics (§4.1's coarse categories, §6.1's metrics and time ranges).
DEFAULT_RULES = IntentRules(
    query_types={
        "comparison": _words("compare", "compared", "comparison", "versus", "vs", "vs.", "against"),
        "products": _words("product", "products", "item", "items", "sku", "skus", "bestseller", "best-selling"),
        "customers": _words("customer", "customers", "buyer", "buyers", "shoppers", "clients", "repeat"),
        "inventory": _words("inventory", "stock", "in stock", "out of stock", "restock", "warehouse"),
        "revenue": _words("revenue", "sales", "income", "turnover", "earnings", "gmv", "earn", "earned"),
        "orders": _words("order", "orders", "purchases", "checkouts", "transactions"),
        "shop_info": _words("shop", "store", "plan", "domain", "currency", "timezone", "settings"),
    },
    metrics={
        "revenue": _words("revenue", "sales", "income", "turnover", "earnings", "gmv"),
        "orders": _words("orders", "order count", "number of orders", "purchases"),
        "average_order_value": _words("average order value", "aov", "average basket", "basket size"),
        "units_sold": _words("units sold", "units", "quantity sold"),
        "refunds": _words("refund", "refunds", "returns", "refunded"),
        "conversion_rate": _words("conversion", "conversion rate", "conversions"),
        "customers": _words("customers", "new customers", "buyers"),
        "profit": _words("profit", "margin", "margins", "net income"),
        "sessions": _words("sessions", "visits", "traffic", "visitors"),
        "inventory": _words("inventory", "stock level", "stock levels"),
    },
    time_ranges=(
        (r"\byesterday\b", "yesterday"),
        (r"\btoday\b", "today"),
        (r"\b(?:last|past|previous) (?:7|seven) days\b", "last_7_days"),
        (r"\b(?:last|past|previous) (?:30|thirty) days\b", "last_30_days"),
        (r"\b(?:last|past|previous) (?:90|ninety) days\b", "last_90_days"),
        (r"\b(?:last|past|previous) week\b", "last_week"),
        (r"\bthis week\b|\bweek to date\b|\bwtd\b", "this_week"),
        (r"\b(?:last|past|previous) month\b", "last_month"),
        (r"\bthis month\b|\bmonth to date\b|\bmtd\b", "this_month"),
        (r"\b(?:last|past|previous) quarter\b", "last_quarter"),
        (r"\bthis quarter\b|\bq[1-4]\b", "this_quarter"),
        (r"\b(?:last|past|previous) year\b", "last_year"),
        (r"\bthis year\b|\byear to date\b|\bytd\b", "this_year"),
    ),
)
