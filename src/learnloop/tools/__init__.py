"""Tool intelligence: which tools to show for a context, how to call them, how to recover.

`loop.tools` is a `ToolIntelligence` for the loop's tenant. The parts: `catalog` (tools and their
vectors), `signals` (session correlation, seed 002's classes), `router` (fusing description, keyword and
learned evidence), `templates`, `recovery`, `insights` (the anonymised aggregator), `decay`, `context`
(the sections of the context block), `shapes` and `sharing` (the write gate over call values, and the call
shapes that are all the tenant's shared knowledge keeps of them), and `base.ToolStore`, the storage contract.
"""

from ..stores.tools import ToolStore
from .base import Familiarity
from .config import RouterWeights, SectionCaps, ToolConfig
from .intelligence import ToolIntelligence
from .models import (
    AggregationReport,
    Insight,
    LearnedPair,
    PrivacyMode,
    QueryTemplate,
    RecoveryPattern,
    RecoverySuggestion,
    RegisterReport,
    RoutedTool,
    SeedTemplate,
    SignalKind,
    SignalReceipt,
    Strength,
    ToolDef,
    ToolInfo,
    ToolSignal,
    ToolStat,
)

__all__ = [
    "AggregationReport",
    "Familiarity",
    "Insight",
    "LearnedPair",
    "PrivacyMode",
    "QueryTemplate",
    "RecoveryPattern",
    "RecoverySuggestion",
    "RegisterReport",
    "RoutedTool",
    "RouterWeights",
    "SectionCaps",
    "SeedTemplate",
    "SignalKind",
    "SignalReceipt",
    "Strength",
    "ToolConfig",
    "ToolDef",
    "ToolInfo",
    "ToolIntelligence",
    "ToolSignal",
    "ToolStat",
    "ToolStore",
]
