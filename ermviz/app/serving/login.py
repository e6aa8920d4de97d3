"""The login page of ``ermviz serve --password``: a Bokeh auth module (``panel serve
--auth-module``) built on Panel's own login and logout handlers.

Bokeh asks every request of the dashboard, its page (``/app``) and its websocket
(``/app/ws``) alike, for the user (:func:`get_user`: the signed ``user`` cookie, Tornado's
secure cookies under the server's cookie secret); without one the page redirects to
:data:`login_url` and the websocket is refused, so no session and no document is made.
The login form asks for a password only: the class password makes the session's user
:data:`~ermviz.access.STUDENT`, the teacher's :data:`~ermviz.access.TEACHER`
(:func:`ermviz.access.user_for`, against the hashes ``ermviz serve`` passed in the
environment). Panel's :class:`~panel.auth.BasicLoginHandler` does the rest (the ``next``
page, the cookies, ``pn.state.user`` in the session). The pages are self-contained (no
CDN): a classroom may have no internet.

Bokeh loads this file by its path before the server forks its worker processes, so every
worker checks the same hashes under the same cookie secret.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import urlparse

from panel.auth import BasicLoginHandler
from panel.auth import LogoutHandler as PanelLogoutHandler

from ermviz.access import STUDENT, TEACHER, user_for

#: Where the login form is (relative: Bokeh mounts it under the server's prefix).
login_url = "/login"
logout_url = "/logout"

_STYLE = (
    "body{font-family:system-ui,sans-serif;background:#f4f6f8;margin:0;display:flex;"
    "align-items:center;justify-content:center;min-height:100vh}"
    "main{background:#fff;padding:2em 2.5em;border-radius:8px;box-shadow:0 2px 12px #0002;"
    "min-width:18em}h1{font-size:1.3em;margin:0 0 1em}label{display:block;margin-bottom:.4em}"
    "input{font-size:1.1em;padding:.4em;width:100%;box-sizing:border-box;margin-bottom:1em}"
    "button{font-size:1em;padding:.5em 1.5em;background:#0072b5;color:#fff;border:0;"
    "border-radius:4px;cursor:pointer}.error{color:#b00020;margin-bottom:1em}"
)


class _Page:
    """A tiny template with the ``render(**kwargs)`` Panel's handlers call."""

    def __init__(self, body: str) -> None:
        self.body = body

    def render(self, **kwargs: Any) -> str:
        error = (
            '<p class="error">Wrong password: try again.</p>' if kwargs.get("errormessage") else ""
        )
        login = html.escape(str(kwargs.get("LOGIN_ENDPOINT") or login_url).lstrip("/"))
        return (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>ermviz: log in</title><style>{_STYLE}</style></head><body><main>"
            + self.body.format(error=error, login=login)
            + "</main></body></html>"
        )


LOGIN_PAGE = _Page(
    "<h1>ermviz</h1>{error}"
    '<form method="post" action="login" autocomplete="off">'
    '<label for="password">Password (the class password, or the teacher\'s)</label>'
    '<input id="password" name="password" type="password" autofocus required>'
    '<button type="submit">Log in</button></form>'
)
LOGOUT_PAGE = _Page('<h1>ermviz</h1><p>You are logged out.</p><p><a href="{login}">Log in</a></p>')


def get_user(request_handler: Any) -> str | None:
    """The request's user (:data:`~ermviz.access.STUDENT` or
    :data:`~ermviz.access.TEACHER`) from its signed cookie, or None (not logged in)."""
    from panel.config import config

    raw = request_handler.get_secure_cookie("user", max_age_days=config.oauth_expiry)
    user = raw.decode("utf-8", "replace") if raw else None
    return user if user in (STUDENT, TEACHER) else None


def _same_site(url: str | None) -> str:
    """``url`` if it is a path on this server, else ``/`` (a login never sends a browser
    elsewhere)."""
    if not url or not url.startswith("/") or url.startswith("//") or "\\" in url:
        return "/"
    parsed = urlparse(url)
    return "/" if parsed.scheme or parsed.netloc else url


class LoginHandler(BasicLoginHandler):
    """Panel's login handler (its GET keeps the ``next`` page in a cookie) whose form
    asks for the password only and whose user is the password's
    (:func:`ermviz.access.user_for`)."""

    _login_endpoint = login_url
    _login_template = LOGIN_PAGE

    def post(self) -> None:
        user = user_for(self.get_argument("password", ""))
        if user is None:
            self.redirect(f".{login_url}?error=1")
            return
        self.set_current_user(user)
        self.redirect(_same_site(self.get_cookie("next_url")))


class LogoutHandler(PanelLogoutHandler):
    """Panel's logout handler (clears the cookies) with the self-contained page."""

    _login_endpoint = login_url
    _logout_template = LOGOUT_PAGE
