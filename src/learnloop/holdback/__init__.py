"""Does memory help? A holdback arm built in (issue 25).

A share of each tenant's users, chosen by a stable hash (or pinned), gets no memory in their context — no
learnings, templates, experience files or profile — while learning from their turns goes on. Each turn records
its arm; the report compares the arms on the outcomes learnloop sees (feedback score, corrections, failures,
tools right first try, turns to resolution) with 95% intervals from a bootstrap over users, a learning curve
and a verdict that claims nothing the interval does not support. Mode `aa` gives both arms memory: the report
must then find no effect.

    await loop.holdback.configure(share=0.1)           # 10% of users held back
    report = await loop.holdback.report(days=30)
    print(report.verdict)
"""

from ..stores.holdback import Arm, HoldbackSettings, Mode
from .assignment import Assignment, context_assignment
from .report import ExperimentReport, HoldbackReport, OutcomeDifference
from .service import HoldbackService

__all__ = [
    "Arm",
    "Assignment",
    "ExperimentReport",
    "HoldbackReport",
    "HoldbackService",
    "HoldbackSettings",
    "Mode",
    "OutcomeDifference",
    "context_assignment",
]
