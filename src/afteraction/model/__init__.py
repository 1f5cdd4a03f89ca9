"""Plain typed data. Each type validates itself and has one serializer each way
(``to_dict`` / ``from_dict``); JSON text goes through ``afteraction.model.json``."""

from afteraction.model.event import AGENT_ROLES, EVENT_TYPES, SPECVERSION, Event
from afteraction.model.experience import Candidate, Experience, Hit, Lesson, Scenario, Skill, Solution, Tried
from afteraction.model.run import Attempt, Evidence, Run, ToolCall, Verdict
from afteraction.model.scope import ELIGIBLE_STATUSES, Scope, Status

__all__ = [
    "AGENT_ROLES",
    "ELIGIBLE_STATUSES",
    "EVENT_TYPES",
    "SPECVERSION",
    "Attempt",
    "Candidate",
    "Event",
    "Evidence",
    "Experience",
    "Hit",
    "Lesson",
    "Run",
    "Scenario",
    "Scope",
    "Skill",
    "Solution",
    "Status",
    "ToolCall",
    "Tried",
    "Verdict",
]
