"""Who may change which document. Pure functions, no I/O; every write path calls :func:`require` (or
:func:`ownership_for_create` when it creates a document), so the rule is written once
(``docs/security-model.md``, "Who may change a document").

Reading is :func:`~assistant_bridge.core.scope.chunk_visible`'s business. A write first needs the document
to be visible (otherwise :class:`~assistant_bridge.errors.NotFound`, exactly like an unknown id, so that the
existence of a document does not leak), and then one of these, per action:

========== =====================================================================================================
action      who may
========== =====================================================================================================
create      anyone with a credential; sharing with a workspace needs membership of it (or its administration);
            publishing to everyone is ``publish``
publish     an admin (a credential with ``admin = true`` not acting for an end user)
update      the owner; a workspace admin of one of the document's workspaces; an admin
delete      the same as ``update``
attach      the owner; an admin (attaching moves a document into one chat session: only who owns it decides)
========== =====================================================================================================

*The owner* is the user id that created the document, in the same tenant (a service key acting for end user
``u`` owns what it creates for ``u``; ``u`` of another tenant does not). A public document (no owner, no
workspaces) has no owner: only an admin may change it. *A workspace admin* is a credential with
``admin_workspaces``; it administers the documents of its own tenant that are shared with one of them. A
credential acting for an end user is that end user, not an admin of anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from assistant_bridge.domain import Ownership, Principal
from assistant_bridge.errors import Forbidden

Action = Literal["update", "delete", "attach", "publish"]
ACTIONS: tuple[Action, ...] = ("update", "delete", "attach", "publish")
_REFUSALS: dict[Action, str] = {
    "update": "only the owner of a document, an admin of one of its workspaces or an admin may change it",
    "delete": "only the owner of a document, an admin of one of its workspaces or an admin may delete it",
    "attach": "only the owner of a document or an admin may attach it to a session",
    "publish": "only admin credentials may publish documents to everyone",
}


def is_admin(p: Principal) -> bool:
    """An admin credential not acting for an end user: it may read and change everything."""
    return p.admin and p.tenant is None


def is_owner(p: Principal, own: Ownership) -> bool:
    return own.owner_user_id != "" and own.owner_user_id == p.user_id and own.tenant == (p.tenant or "")


def administers(p: Principal, own: Ownership) -> bool:
    """``p`` is a workspace admin of one of the document's workspaces, in the document's tenant."""
    return own.tenant == (p.tenant or "") and bool(set(own.workspace_ids) & set(p.admin_workspaces))


def allowed(action: Action, p: Principal, own: Ownership | None = None) -> bool:
    """Whether ``p`` may do ``action`` to a document with ownership ``own`` (which ``p`` can see)."""
    if is_admin(p):
        return True
    if action == "publish" or own is None:
        return False
    if action == "attach":
        return is_owner(p, own)
    return is_owner(p, own) or administers(p, own)


def require(action: Action, p: Principal, own: Ownership | None = None) -> None:
    """:raises Forbidden: when :func:`allowed` says no, naming the rule."""
    if not allowed(action, p, own):
        raise Forbidden(_REFUSALS[action])


def ownership_for_create(p: Principal, workspaces: Iterable[str], *, public: bool, session_id: str = "") -> Ownership:
    """The ownership of a document ``p`` creates (the session id already checked by the caller).

    :raises Forbidden: publishing without being an admin, or sharing with a workspace ``p`` neither belongs to
        nor administers.
    """
    shared = tuple(sorted(set(workspaces)))
    if public:
        require("publish", p)
    if not is_admin(p) and not set(shared) <= set(p.workspaces) | set(p.admin_workspaces):
        raise Forbidden("a document can only be shared with workspaces the caller belongs to")
    return Ownership(
        owner_user_id="" if public else p.user_id, workspace_ids=shared, tenant=p.tenant or "", session_id=session_id
    )
