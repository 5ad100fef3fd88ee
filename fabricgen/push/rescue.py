"""What a failed switch change says: read back from the switch, not hoped.

After a failure the rescue tries to roll back at once, then reads the switch again. The message
then states what is true: nothing was committed; or the switch is verifiably back on its
pre-change config (the sections fabricgen owns equal those read before the change); or it could
not be verified, and the switch rolls back by itself when its commit timer / commit-timeout
expires, at a time computed from the commit time the controller recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fabricgen.push.ownership import owned_text
from fabricgen.push.rollout import seconds


@dataclass(frozen=True, slots=True)
class Attempt:
    """What the controller knows about one failed change."""

    device: str
    platform: str
    name: str  # EOS session or NX-OS bootflash file / checkpoint
    committed: bool
    timer: Any
    committed_at: str
    rollback_ok: bool
    failed_task: str


def expiry(committed_at: str, timer: Any) -> str:
    """When the switch rolls back by itself: commit time + timer, UTC.

    >>> expiry("2026-12-01 10:00:00", "00:10:00")
    '2026-12-01 10:10:00 UTC'
    """
    try:
        start = datetime.strptime(committed_at, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return f"{seconds(timer)} s after the commit"
    return (start + timedelta(seconds=seconds(timer))).strftime("%Y-%m-%d %H:%M:%S UTC")


def _pending(sessions: Any, name: str) -> bool:
    """The session still appears with a pending state in `show configuration sessions detail`."""
    if not isinstance(sessions, Mapping):
        return False
    entry = (sessions.get("sessions") or {}).get(name)
    return isinstance(entry, Mapping) and "pending" in str(entry.get("state", "")).lower()


def outcome(attempt: Attempt, before: str, after: str | None, sessions: Any = None) -> str:
    """The sentence that says where the switch stands, from what was read back."""
    device = attempt.device
    if not attempt.committed:
        back = after is not None and owned_text(attempt.platform, after) == owned_text(attempt.platform, before)
        verified = "verified: its config is unchanged" if back else "its config could not be read back; nothing had been committed"
        return f"{device}: failed before any commit ('{attempt.failed_task}'); staging of {attempt.name} was discarded, {verified}."
    if (
        after is not None
        and owned_text(attempt.platform, after) == owned_text(attempt.platform, before)
        and not _pending(sessions, attempt.name)
    ):
        return f"{device}: '{attempt.failed_task}' failed; rolled back now and verified: the sections fabricgen owns equal the pre-change config."
    reason = "the rollback command failed" if not attempt.rollback_ok else "the switch still differs from its pre-change config"
    if after is None:
        reason = "the switch could not be read back"
    return (
        f"{device}: '{attempt.failed_task}' failed and {reason}. The change {attempt.name} is not confirmed: the switch rolls back "
        f"by itself when its commit timer expires, at {expiry(attempt.committed_at, attempt.timer)}. Do not confirm it; check the "
        "switch after that time."
    )


def rescue_report(
    device: str,
    platform: str,
    name: str,
    committed: bool,
    timer: Any,
    committed_at: str,
    rollback_ok: bool,
    before: str,
    after: str | None,
    sessions: Any,
    failed_task: str,
    problems: Iterable[str] = (),
) -> str:
    """The Ansible filter: the rescue's message, outcome first, then the post-check problems."""
    attempt = Attempt(device, platform, name, bool(committed), timer, str(committed_at or ""), bool(rollback_ok), str(failed_task))
    text = outcome(attempt, str(before or ""), None if after is None else str(after), sessions)
    listed = list(problems or ())
    return text + (f" Post-check problems: {'; '.join(listed)}" if listed else "")
