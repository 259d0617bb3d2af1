"""People's accounts (``server.people.accounts``): making a guest an account, signing in and
out, changing a password, and the session token a sign-in gives."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.protocol.common import PlayerView, _ClientMessage, _Message

__all__ = [
    "AccountName", "Password", "SignUp", "SignIn", "SignOut", "ChangePassword",
    "ACCOUNT_MESSAGES", "SignedIn", "SignedOut", "PasswordChanged",
]


# --- client -> server -----------------------------------------------------------------------------


AccountName = Annotated[str, Field(min_length=1, max_length=64, description=(
    "3 to 20 letters (a-z, A-Z), digits, `_` or `-`, starting with a letter or digit; "
    "unique whatever the letter case."))]

Password = Annotated[str, Field(min_length=1, max_length=256, description=(
    "8 to 128 characters."))]


class SignUp(_ClientMessage):
    """Make this guest an account (answered by ``signed_in``): the player keeps its id, so
    its games, finished and under way, are the account's, and takes the account's name.
    Errors, each changing nothing: ``bad_account_name``, ``bad_password``, ``not_a_guest``,
    ``rate_limited``."""

    type: Literal["sign_up"] = "sign_up"
    name: AccountName
    password: Password


class SignIn(_ClientMessage):
    """Ask for a session of an account (answered by ``signed_in``). This connection stays
    what its ``hello`` made it: say ``hello`` again with ``resume`` set to the session token
    to be the account. A failure is ``wrong_name_or_password`` whatever was wrong; too many
    attempts, ``rate_limited``."""

    type: Literal["sign_in"] = "sign_in"
    name: AccountName
    password: Password


class SignOut(_ClientMessage):
    """End this connection's session (``everywhere``: every session of the account);
    answered by ``signed_out``, after which the server closes every connection that came in
    with a revoked session, this one too. ``not_signed_in`` if this connection did not say
    hello with a session token."""

    type: Literal["sign_out"] = "sign_out"
    everywhere: bool = Field(default=False, description="Revoke all the account's sessions.")


class ChangePassword(_ClientMessage):
    """Change this account's password, given its current one (answered by
    ``password_changed``). Every other session of the account is revoked (the connections
    that came in with them are closed), so a password someone else learnt no longer keeps
    them signed in; this connection's session stays. Errors, each changing nothing:
    ``not_signed_in``, ``wrong_name_or_password`` (the current password is wrong),
    ``bad_password`` (the new one), ``rate_limited``."""

    type: Literal["change_password"] = "change_password"
    password: Password
    new_password: Password


ACCOUNT_MESSAGES = (SignUp, SignIn, SignOut, ChangePassword)


# --- server -> client -----------------------------------------------------------------------------


class SignedIn(_Message):
    """Answer to ``sign_up`` and ``sign_in``: the account and a new session token, a secret
    shown this once. Keep it: ``hello`` with it as ``resume`` comes back as the account, on
    this browser, until it is revoked (``sign_out``)."""

    type: Literal["signed_in"] = "signed_in"
    player: PlayerView
    session: str = Field(description="The session token (stored on the server only hashed).")


class SignedOut(_Message):
    """Answer to ``sign_out``: how many sessions were revoked. The server then closes the
    connections that used them (code 1000, reason `signed_out`)."""

    type: Literal["signed_out"] = "signed_out"
    revoked: int


class PasswordChanged(_Message):
    """Answer to ``change_password``: the new password is the account's, and this many
    other sessions were revoked (their connections are closed, code 1000, reason
    `signed_out`)."""

    type: Literal["password_changed"] = "password_changed"
    revoked: int
