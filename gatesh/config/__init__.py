"""Configuration (S12): TOML tiers, later overriding earlier, with a tightening rule.

Tiers: built-in defaults, the system file (``/etc/gatesh/config.toml``), the user file (platform
config folder), a project's ``.gatesh.toml`` (nearest one at or above the working directory).
The system and project tiers can only tighten: they add deny/escalate entries and cap the rung;
only the user tier can allow. A project file may set nothing else, because an agent can write one.
An invalid file raises :class:`ConfigError` naming file, line and key — never a silent default.

One module per concept: :mod:`~gatesh.config.model` (the sections, their enums and defaults, and
which keys each tier may set), :mod:`~gatesh.config.files` (reading the TOML tiers into a Config)
and :mod:`~gatesh.config.show` (``gatesh config``, the rater it selects, adding a list entry).
"""

from __future__ import annotations

from gatesh.config.files import (
    find_project_file,
    load_config,
)
from gatesh.config.model import (
    DEFAULT_ASK_MODEL,
    DEFAULT_CHECKER_MODEL,
    DEFAULT_RATER_MODEL,
    LISTS,
    PROJECT_FILE,
    PROJECT_KEYS,
    SCALARS,
    SYSTEM_ONLY,
    AlignmentConfig,
    AuditConfig,
    Backend,
    BoundaryConfig,
    Config,
    EscalationConfig,
    GitConfig,
    Mark,
    NetworkDefault,
    Operator,
    RaterConfig,
    SessionConfig,
    Shell,
    UndoConfig,
    default,
)
from gatesh.config.show import (
    add_list_entry,
    config_main,
    effective_items,
    rater_backend,
    rater_summary,
)

__all__ = [
    "DEFAULT_ASK_MODEL",
    "DEFAULT_CHECKER_MODEL",
    "DEFAULT_RATER_MODEL",
    "LISTS",
    "PROJECT_FILE",
    "PROJECT_KEYS",
    "SCALARS",
    "SYSTEM_ONLY",
    "AlignmentConfig",
    "AuditConfig",
    "Backend",
    "BoundaryConfig",
    "Config",
    "EscalationConfig",
    "GitConfig",
    "Mark",
    "NetworkDefault",
    "Operator",
    "RaterConfig",
    "SessionConfig",
    "Shell",
    "UndoConfig",
    "add_list_entry",
    "config_main",
    "default",
    "effective_items",
    "find_project_file",
    "load_config",
    "rater_backend",
    "rater_summary",
]
