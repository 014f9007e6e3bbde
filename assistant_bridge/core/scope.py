"""Who may read which chunk. Pure functions; every backend translates :func:`scope_clauses` into its own
query language, and every search path double-checks hits with :func:`chunk_visible`.

The rules (``docs/security-model.md``):

* ``document_ids`` in a request narrows; an id the caller cannot see is simply absent.
* A chunk attached to a chat session is visible only in that session (and to its owner); within the
  session it is visible to the session's caller (the session layer checks who may use a session id).
* A caller acting for an end user (tenant) sees that tenant's chunks, plus the global (tenant ``""``)
  chunks that the user rule below allows: public ones and those shared with the credential's workspaces.
  Another user's private global documents stay private.
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
    if p.tenant is not None and own.tenant == p.tenant:
        return True
    if p.tenant is None and p.admin:
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
    restricted: bool  # False: an admin not acting for an end user (no tenant/user clause)
    tenant: str | None  # (tenant == this) OR (tenant == "" AND user rule); None: tenant == "" AND user rule
    workspaces: tuple[str, ...]
    # user rule: owner == user OR session_id == session OR workspaces ∩ user's OR (owner == "" AND no workspaces)


def scope_clauses(scope: Scope) -> ScopeClauses:
    p = scope.principal
    return ScopeClauses(
        document_ids=scope.document_ids,
        session_id=scope.session_id or "",
        user_id=p.user_id,
        restricted=not (p.admin and p.tenant is None),
        tenant=p.tenant,
        workspaces=tuple(p.workspaces),
    )
