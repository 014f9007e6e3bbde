"""Who may read which chunk. Pure functions; every backend translates :func:`scope_clauses` into its own
query language, and every search path double-checks hits with :func:`chunk_visible`.

The rules (``docs/security-model.md``):

* ``document_ids`` in a request narrows; an id the caller cannot see is simply absent.
* A chunk attached to a chat session is visible only in that session (and to its owner); within the
  session it is visible to the session's caller (the session layer checks who may use a session id).
* A caller acting for an end user (tenant) sees that tenant's chunks plus global ones (tenant ``""``).
* An admin key without an end user sees everything.
* Any other user sees global-tenant chunks that are public (no owner, no workspaces), owned by them, or
  shared with one of their workspaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant_bridge.domain import Chunk, Scope


def chunk_visible(chunk: Chunk, scope: Scope) -> bool:
    own = chunk.ownership
    p = scope.principal
    if scope.document_ids is not None and chunk.document_id not in scope.document_ids:
        return False
    in_session = bool(own.session_id) and own.session_id == scope.session_id
    if own.session_id and not in_session and own.owner_user_id != p.user_id:
        return False
    if p.tenant is not None:
        return own.tenant in ("", p.tenant)
    if p.admin:
        return True
    if own.tenant != "":
        return False
    if own.owner_user_id == p.user_id or in_session:
        return True
    if set(own.workspace_ids) & set(p.workspaces):
        return True
    return own.owner_user_id == "" and not own.workspace_ids


@dataclass(frozen=True)
class ScopeClauses:
    """The visibility rule as data, for backends to translate. All listed clauses must hold (AND)."""

    document_ids: tuple[str, ...] | None  # document_id IN (...)
    session_id: str  # session_id == "" OR session_id == this OR owner == user_id
    user_id: str
    tenants: tuple[str, ...] | None  # tenant IN (...); None = any tenant
    user_rule: bool  # owner == user OR in session OR workspaces ∩ user_workspaces OR (owner == "" AND no workspaces)
    workspaces: tuple[str, ...]


def scope_clauses(scope: Scope) -> ScopeClauses:
    p = scope.principal
    if p.tenant is not None:
        tenants: tuple[str, ...] | None = ("", p.tenant)
        user_rule = False
    elif p.admin:
        tenants, user_rule = None, False
    else:
        tenants, user_rule = ("",), True
    return ScopeClauses(
        document_ids=scope.document_ids,
        session_id=scope.session_id or "",
        user_id=p.user_id,
        tenants=tenants,
        user_rule=user_rule,
        workspaces=tuple(p.workspaces),
    )
