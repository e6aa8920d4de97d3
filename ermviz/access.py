"""Who may use a served dashboard, and who may read the server's results folders.

``ermviz serve --password`` (README, "Serving a class") puts a login page in front of the
dashboard (:mod:`ermviz.app.serving.login`, Bokeh's auth-module hook with Panel's login handler):

* the **class password** lets a student in (the session's user is :data:`STUDENT`);
* the **teacher's password** (``--admin-password``) lets the teacher in (:data:`TEACHER`),
  whose sessions may open results folders on the server (the Results tab);
* anything else gets the login page again: no document, no websocket.

The passwords are read from the environment (:data:`PASSWORD_ENV`,
:data:`ADMIN_PASSWORD_ENV`) or typed at the terminal, never from the command line, where
``ps`` shows them to every user of the machine. The server keeps only salted scrypt hashes
(:func:`hash_password`, RFC 7914), handed to it in :data:`HASHES_ENV`; a login costs about
50 ms of CPU, which also slows guessing.

:func:`results_allowed` is the Results tab's rule, per session: ``ERMVIZ_RESULTS`` set empty
turns folders off for everyone (:mod:`ermviz.app.results.model`); otherwise
:data:`RESULTS_ACCESS_ENV` says who may open them: ``all`` (the default, and what
``ermviz serve`` keeps on the loopback interface without a password), ``teacher`` (sessions
logged in with the teacher's password) or ``off``.

This module imports neither Panel nor the dashboard (``ermviz serve`` uses it).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import os
import secrets

#: The environment variables ``ermviz serve --password`` reads the passwords from.
PASSWORD_ENV = "ERMVIZ_PASSWORD"
ADMIN_PASSWORD_ENV = "ERMVIZ_ADMIN_PASSWORD"
#: What the server is given instead: ``{"student": hash, "teacher": hash}`` as JSON.
HASHES_ENV = "ERMVIZ_PASSWORD_HASHES"
#: Who may open results folders: ``all``, ``teacher`` or ``off`` (unset: ``all``).
RESULTS_ACCESS_ENV = "ERMVIZ_RESULTS_ACCESS"
RESULTS_ACCESS = ("all", "teacher", "off")

#: The session's user after a login with the class password, or with the teacher's.
STUDENT = "student"
TEACHER = "teacher"

#: The shortest password accepted (a class password is written on the board; six
#: characters still take a guesser at 50 ms a try years per character set of 36).
MIN_LENGTH = 6

# scrypt's cost (RFC 7914): 2**14 x 8 x 1, 16 MiB and about 50 ms per hash.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


def hash_password(password: str, salt: bytes | None = None) -> str:
    """A salted scrypt hash of ``password``: ``scrypt$n$r$p$salt$hash`` (base64)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, dklen=32, **_SCRYPT)

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode("ascii")

    return "scrypt${n}${r}${p}$".format(**_SCRYPT) + f"{b64(salt)}${b64(digest)}"


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` hashes to ``stored`` (:func:`hash_password`); compared in
    constant time. A malformed ``stored`` matches nothing."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        want = base64.b64decode(digest)
        got = hashlib.scrypt(
            password.encode("utf-8"),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(want),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def encode_hashes(hashes: dict[str, str]) -> str:
    """The value of :data:`HASHES_ENV` for ``{user: hash}``."""
    return json.dumps(hashes, sort_keys=True)


def user_for(password: str, encoded: str | None = None) -> str | None:
    """The user a login with ``password`` becomes (:data:`TEACHER` or :data:`STUDENT`), or
    None for a wrong one. ``encoded``: :data:`HASHES_ENV`'s value (default: from the
    environment). Every stored hash is checked, so a wrong password costs what a right
    one does."""
    raw = os.environ.get(HASHES_ENV, "") if encoded is None else encoded
    try:
        hashes = json.loads(raw) if raw else {}
    except ValueError:
        return None
    found = None
    for user in (TEACHER, STUDENT):
        if user in hashes and check_password(password, str(hashes[user])) and found is None:
            found = user
    return found


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an interface to listen on) reaches this machine only:
    ``localhost`` or a loopback IP; ``0.0.0.0``, ``::`` and any other name do not."""
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def results_policy() -> str:
    """:data:`RESULTS_ACCESS_ENV`: ``all`` when unset; an unknown value counts as ``off``
    (a typo must not open the server's folders)."""
    value = os.environ.get(RESULTS_ACCESS_ENV, "").strip().lower() or "all"
    return value if value in RESULTS_ACCESS else "off"


def results_allowed(user: str | None) -> bool:
    """Whether a session of ``user`` (None: not logged in) may open results folders."""
    policy = results_policy()
    return policy == "all" or (policy == "teacher" and user == TEACHER)
