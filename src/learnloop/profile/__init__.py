"""The user profile (seed 001 §2 layer 2, §6.1, §9): `loop.profiles`."""

from .models import PatternShare, ProfileEdit, ProfilePattern, UserProfile
from .rules import DEFAULT_RULES, IntentRules, QueryAnalysis
from .service import KINDS, PROFILE_TITLE, ProfileConfig, ProfileService

__all__ = [
    "DEFAULT_RULES",
    "KINDS",
    "PROFILE_TITLE",
    "IntentRules",
    "PatternShare",
    "ProfileConfig",
    "ProfileEdit",
    "ProfilePattern",
    "ProfileService",
    "QueryAnalysis",
    "UserProfile",
]
