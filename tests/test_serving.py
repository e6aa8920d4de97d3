"""Serving safely: the defaults a teacher relies on when the dashboard is served to a class.

* ``make serve`` binds the loopback interface only, accepts websocket origins of this
  machine only, and discards a closed page's session within seconds;
* another address needs ``--password`` (refused otherwise, one line) or ``--no-password``
  (a warning); the password comes from the environment or the terminal, never the command
  line, and the server is given only its hash;
* behind ``--password`` (a real ``ermviz serve --procs 2``), a wrong or missing password
  gets no document and no websocket, the right one a working page on either worker;
* the Results tab opens folders for the teacher's sessions only (``--admin-password``),
  in the model and on the served page in Chromium;
* with ``--procs N`` one worker's warm-up child compiles, the others follow its progress;
* ``ERMVIZ_RESULTS`` set empty turns the Results tab's folder access off (nothing listed,
  a typed path refused, the inputs disabled), while unset keeps the defaults;
* the per-session limits hold: at most ``MAX_RUNS`` runs per race, uploads above
  ``MAX_UPLOAD_BYTES`` refused before they are stored, ``repeat`` bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from ermviz.access import (
    ADMIN_PASSWORD_ENV,
    HASHES_ENV,
    PASSWORD_ENV,
    RESULTS_ACCESS_ENV,
    STUDENT,
    TEACHER,
    user_for,
)
from ermviz.sweep import load_config, run_cell

REPO = Path(__file__).resolve().parent.parent

SWEEP = """
name = "serving"
[[grid]]
datasets = ["toy-2d"]
problems = ["logreg-l1"]
methods = ["pfw"]
steps = ["exact"]
settings = { radius = [2.0] }
budget = { tol = 1e-6, max_iter = 200, max_time = 5 }
"""


def _serve_command(*overrides: str) -> str:
    """The server command ``make serve`` runs: make's recipe (``ermviz serve ...``) run
    with ``--print-command``, which prints the environment and the ``panel serve`` line
    (run by ``ermviz.workers`` with several worker processes)."""
    out = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "serve", *overrides],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [ln for ln in out.replace("\\\n", " ").splitlines() if "ermviz serve" in ln]
    assert len(lines) == 1, out
    printed = subprocess.run(
        ["bash", "-c", lines[0] + " --print-command"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    launcher = re.compile(r" -m (panel|ermviz\.workers) serve ")
    served = [ln for ln in printed.splitlines() if launcher.search(ln)]
    assert len(served) == 1, printed
    # make's own environment prefix, then what ermviz serve adds (it sets only what is unset)
    recipe_env = [w for w in lines[0][: lines[0].index("ermviz serve")].split() if "=" in w]
    return " ".join([*recipe_env, *served[0].split()])


def test_make_serve_binds_loopback_and_accepts_this_machine_only():
    cmd = _serve_command()
    assert "--address 127.0.0.1" in cmd
    origins = re.findall(r"--allow-websocket-origin (\S+)", cmd)
    assert sorted(origins) == ["127.0.0.1:5006", "localhost:5006"]
    # A closed page's session (and its memory) is discarded within 1 + 5 s, not 32 s.
    assert "--check-unused-sessions 1000" in cmd and "--unused-session-lifetime 5000" in cmd
    # The allocator settings that give a closed session's memory back (bench_load.py), set
    # in the server's environment.
    env = [word for word in cmd[: cmd.index(" -m panel serve")].split() if "=" in word]
    assert {"PYTHONMALLOC=malloc", "MALLOC_ARENA_MAX=2"} <= set(env), cmd
    assert " -m panel serve " in cmd and "--num-procs" not in cmd and "--auth-module" not in cmd
    classroom = _serve_command(
        "ADDRESS=0.0.0.0", "ORIGINS=10.1.2.3:5006", "PORT=5006", "PASSWORD=yes", "PROCS=2"
    )
    assert "--address 0.0.0.0" in classroom
    assert re.findall(r"--allow-websocket-origin (\S+)", classroom) == ["10.1.2.3:5006"]
    assert f"--auth-module {REPO / 'ermviz' / 'app' / 'serving' / 'login.py'}" in classroom
    assert (
        "--num-procs 2 --reuse-sessions" in classroom and " -m ermviz.workers serve " in classroom
    )
    # Each of the two workers computes at most half of the machine's solver threads.
    from ermviz.serve import usable_cpus

    assert f"ERMVIZ_SOLVER_THREADS={usable_cpus() // 2}" in classroom.split(), classroom


def test_the_load_benchmark_runs_what_make_serve_runs():
    # benchmarks/bench_load.py reads make serve's recipe; it once looked for a
    # ``panel serve`` line that the recipe no longer has, and could not start a server.
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_load import serve_command
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    env, cmd = serve_command(5123)
    assert cmd[0].endswith("ermviz") and cmd[1] == "serve", cmd
    assert cmd[cmd.index("--port") + 1] == "5123" and "--show" not in cmd
    assert {"PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"}.items() <= env.items()


@pytest.fixture(scope="module")
def results_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("serving")
    (tmp / "sweep.toml").write_text(SWEEP)
    cfg = load_config(tmp / "sweep.toml")
    out = tmp / "res"
    for cell in cfg.cells:
        run_cell(cell, str(out), cfg.name)
    (out / "config.toml").write_text(cfg.text)
    return out


def test_an_empty_ermviz_results_turns_folder_access_off(results_folder, monkeypatch):
    from ermviz.app.results.model import OFF_TEXT, ResultsModel
    from ermviz.app.results.view import ResultsView

    notes: list[tuple[str, str]] = []
    monkeypatch.setenv("ERMVIZ_RESULTS", str(results_folder.parent))
    model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)))
    assert model.found == [str(results_folder)]
    assert model.open(results_folder) and len(model.summaries) == 1

    monkeypatch.setenv("ERMVIZ_RESULTS", "")
    model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)))
    view = ResultsView(model)
    assert model.found == [] and model.roots == []
    assert model.status == OFF_TEXT
    assert not model.open(results_folder)
    assert notes[-1] == ("error", OFF_TEXT) and len(model.summaries) == 0
    assert view.path_input.disabled and view.open_button.disabled and view.found_select.disabled

    monkeypatch.delenv("ERMVIZ_RESULTS")  # unset: the defaults again
    model = ResultsModel(notifier=lambda level, msg: None)
    assert model.open(results_folder)


def test_per_session_limits_hold():
    from ermviz.app.state.datasets import MAX_UPLOAD_BYTES
    from ermviz.app.state.model import MAX_RUNS, DashboardModel

    notes: list[tuple[str, str]] = []
    m = DashboardModel(notifier=lambda level, msg: notes.append((level, msg)))
    while len(m.specs) < MAX_RUNS:
        assert m.add_run() is not None
    assert m.add_run() is None and len(m.specs) == MAX_RUNS
    assert f"at most {MAX_RUNS} runs" in notes[-1][1]
    # An upload above the limit is refused before anything is stored or parsed.
    big = b"+1 1:1\n" * (MAX_UPLOAD_BYTES // 7 + 1)
    assert m.add_upload("big.svm", big) is None
    assert "MB" in notes[-1][1] and m.dataset != "upload:big.svm"
    bounds = m.param.repeat.bounds
    assert bounds is not None and bounds[1] is not None and bounds[1] <= 100


# -- beyond the loopback interface: a password ---------------------------------------------
def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m ermviz serve ARGS`` (stdin not a terminal: nothing is asked)."""
    base = {k: v for k, v in os.environ.items() if k not in (PASSWORD_ENV, ADMIN_PASSWORD_ENV)}
    return subprocess.run(
        [sys.executable, "-m", "ermviz", "serve", *args],
        cwd=REPO,
        env={**base, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )


def test_serving_beyond_loopback_needs_a_password_or_a_loud_no(monkeypatch, capsys):
    refused = _cli("--address", "0.0.0.0", "--print-command")
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "--address 0.0.0.0 lets anyone" in refused.stderr and "--password" in refused.stderr
    for address in ("192.168.1.20", "teacher-pc.local", "::"):
        assert _cli("--address", address, "--print-command").returncode == 2
    # The loopback interface needs none (make serve's default), by name or number.
    for address in ("127.0.0.1", "localhost", "::1", "127.0.1.1"):
        assert _cli("--address", address, "--print-command").returncode == 0, address
    # --no-password serves anyway, with a one-line warning, and no results folders.
    from ermviz import serve as serving

    launched: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(serving.os, "execve", lambda exe, argv, env: launched.append((argv, env)))
    serving.serve("0.0.0.0", 6123, show=False, procs=1, no_password=True)
    err = capsys.readouterr().err
    warnings = [ln for ln in err.splitlines() if "WARNING" in ln]
    assert len(warnings) == 1 and "WITHOUT A PASSWORD" in warnings[0], err
    [(argv, env)] = launched
    assert "--auth-module" not in argv and env[RESULTS_ACCESS_ENV] == "off"
    assert _cli("--address", "0.0.0.0", "--password", "--no-password").returncode == 2


def test_the_password_never_reaches_a_command_line_and_the_server_keeps_its_hash(monkeypatch):
    from ermviz import serve as serving

    # Without the variable and without a terminal: one line saying where it comes from.
    missing = _cli("--address", "0.0.0.0", "--password", "--no-show", "--port", "6124")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert PASSWORD_ENV in missing.stderr and "command line" in missing.stderr
    short = _cli("--password", "--no-show", env={PASSWORD_ENV: "abc"})
    assert short.returncode == 2 and "at least" in short.stderr
    both = {PASSWORD_ENV: "s3cret-class", ADMIN_PASSWORD_ENV: "s3cret-class"}
    same = _cli("--password", "--admin-password", env=both)
    assert same.returncode == 2 and "must differ" in same.stderr
    # --print-command shows no secret (and asks for none).
    printed = _cli("--address", "0.0.0.0", "--password", "--print-command",
                   env={PASSWORD_ENV: "s3cret-class"})  # fmt: skip
    assert printed.returncode == 0 and "s3cret" not in printed.stdout
    assert f"{HASHES_ENV}='<hidden>'" in printed.stdout

    monkeypatch.setenv(PASSWORD_ENV, "s3cret-class")
    monkeypatch.setenv(ADMIN_PASSWORD_ENV, "s3cret-teacher")
    launched: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(serving.os, "execve", lambda exe, argv, env: launched.append((argv, env)))
    serving.serve("0.0.0.0", 6125, show=False, procs=2, password=True, admin_password=True)
    [(argv, env)] = launched
    assert not any("s3cret" in word for word in argv)
    assert PASSWORD_ENV not in env and ADMIN_PASSWORD_ENV not in env
    assert not any("s3cret" in value for value in env.values())
    assert user_for("s3cret-class", env[HASHES_ENV]) == STUDENT
    assert user_for("s3cret-teacher", env[HASHES_ENV]) == TEACHER
    assert user_for("s3cret-clas", env[HASHES_ENV]) is None
    assert env[RESULTS_ACCESS_ENV] == "teacher" and env["BOKEH_SIGN_SESSIONS"] == "yes"
    assert len(env["PANEL_COOKIE_SECRET"]) >= 32 and len(env["BOKEH_SECRET_KEY"]) >= 32


def test_workers_share_the_solver_threads():
    from ermviz.errors import SettingError
    from ermviz.serve import check, command, environment

    env = environment(4, base={}, procs=2)
    assert env["ERMVIZ_SOLVER_THREADS"] == "2" and env["NUMBA_NUM_THREADS"] == "2"
    env = environment(3, base={}, procs=2)  # never more than the budget in all: 1 + 1
    assert env["ERMVIZ_SOLVER_THREADS"] == "1"
    assert environment(0, base={}, procs=2)["ERMVIZ_SOLVER_THREADS"] == "0"  # (no limit)
    with pytest.raises(SettingError, match="--procs 3: more workers than the 2 solver"):
        check("127.0.0.1", 5006, 2, procs=3)
    argv = command(procs=3, show=True)
    assert argv[1:3] == ["-m", "ermviz.workers"] and "--show" not in argv  # (one browser)
    assert argv[argv.index("--num-procs") + 1] == "3" and "--reuse-sessions" in argv


# -- a served dashboard behind the password ------------------------------------------------
CLASS_PW, TEACHER_PW = "open-sesame-42", "teacher-only-17"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, results_folder: Path):
    """``ermviz serve --password --admin-password --procs 2`` on a free port, its results
    roots the folder of ``results_folder``; yields (base URL, log path)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp("guarded") / "server.log"
    env = {
        **os.environ,
        "ERMVIZ_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        PASSWORD_ENV: CLASS_PW,
        ADMIN_PASSWORD_ENV: TEACHER_PW,
        "ERMVIZ_RESULTS": str(results_folder.parent),
    }
    args = ["--port", str(port), "--procs", "2", "--password", "--admin-password", "--no-show"]
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ermviz", "serve", *args, "--no-warmup"],
            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120  # a bound against a hang, not a timing
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5):
                    break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}", log
    finally:
        proc.terminate()
        proc.wait(30)
        # Its workers follow their master (ermviz.workers): none is left holding the port.
        deadline = time.monotonic() + 30
        while _listening(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _listening(port), log.read_text()[-3000:]


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def _login(base: str, password: str) -> tuple[int, str, dict[str, str]]:
    """The login page, then its form posted with ``password``: (status, where it sends
    the browser, the cookies a browser then holds)."""
    from tornado.httpclient import AsyncHTTPClient

    client = AsyncHTTPClient()
    cookies: dict[str, str] = {}

    def keep(resp) -> None:
        for header in resp.headers.get_list("Set-Cookie"):
            name, _, value = header.split(";")[0].partition("=")
            if value and "expires=Thu, 01 Jan 1970" not in header:
                cookies[name] = value
            else:
                cookies.pop(name, None)

    form = await client.fetch(f"{base}/login?next=%2Fapp", raise_error=False)
    assert form.code == 200 and b'name="password"' in form.body
    assert b"cdn" not in form.body.lower()  # self-contained: a classroom may be offline
    keep(form)
    post = await client.fetch(
        f"{base}/login", method="POST", body=urlencode({"password": password}),
        headers={"Cookie": _cookie_header(cookies)}, follow_redirects=False, raise_error=False,
    )  # fmt: skip
    keep(post)
    return post.code, post.headers.get("Location", ""), cookies


def _cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in cookies.items())


async def _page(base: str, cookies: dict[str, str]) -> tuple[int, str, str]:
    """GET /app with ``cookies``: (status, where it redirects, the session token)."""
    from tornado.httpclient import AsyncHTTPClient

    resp = await AsyncHTTPClient().fetch(
        f"{base}/app", headers={"Cookie": _cookie_header(cookies)},
        follow_redirects=False, raise_error=False,
    )  # fmt: skip
    found = re.search(r'"token":\s*"([^"]+)"', resp.body.decode("utf-8", "replace"))
    return resp.code, resp.headers.get("Location", ""), found.group(1) if found else ""


async def _websocket(base: str, token: str, cookies: dict[str, str]) -> str:
    """Open the page's websocket with ``token``: the first message's type (``ACK``: a
    session), or how it was refused (``refused 403`` at the handshake, ``closed``)."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    request = HTTPRequest(
        base.replace("http://", "ws://") + "/app/ws",
        headers={"Cookie": _cookie_header(cookies)}, request_timeout=120,
    )  # fmt: skip
    try:
        ws = await websocket_connect(request, subprotocols=["bokeh", token])
    except HTTPClientError as exc:
        return f"refused {exc.code}"
    try:
        first = await asyncio.wait_for(ws.read_message(), 120)
        if first is None:
            return "closed"
        kind = json.loads(first)["msgtype"]
        if kind == "ACK":  # the document itself: what the page renders
            await ws.read_message()  # (the ACK's metadata and content)
            await ws.read_message()
            header = {"msgid": "t1", "msgtype": "PULL-DOC-REQ", "num_buffers": 0}
            for frame in (json.dumps(header), "{}", "{}"):
                await ws.write_message(frame)
            while True:
                head = json.loads(await ws.read_message())
                await ws.read_message()
                content = await ws.read_message()
                for _ in range(2 * head.get("num_buffers", 0)):
                    await ws.read_message()
                if head["msgtype"] == "PULL-DOC-REPLY":
                    assert '"label":"Start"' in content.replace(" ", ""), content[:300]
                    return "document"
        return kind
    finally:
        ws.close()


def test_a_wrong_or_missing_password_gets_no_document_and_no_websocket(guarded):
    from bokeh.util.token import generate_jwt_token, generate_session_id

    base, log = guarded

    async def scenario() -> None:
        made_up = generate_jwt_token(generate_session_id())  # a token nobody signed
        # No login: the page sends the browser to the login form, with no session token.
        code, where, token = await _page(base, {})
        assert code == 302 and where.endswith("login?next=%2Fapp") and token == ""
        assert await _websocket(base, made_up, {}) == "refused 403"
        # A wrong password: the form again, no user cookie, and still nothing.
        code, where, cookies = await _login(base, "open-sesame-43")
        assert code == 302 and "login?error" in where and "user" not in cookies
        assert (await _page(base, cookies))[0] == 302
        assert await _websocket(base, made_up, cookies) == "refused 403"
        # A cookie made up by a student (not signed with the server's secret).
        assert await _websocket(base, made_up, {"user": "teacher"}) == "refused 403"
        # The right password: the page and its document, whichever worker each request
        # reaches (the page's HTTP request and its websocket may reach different ones).
        code, where, cookies = await _login(base, CLASS_PW)
        assert code == 302 and where == "/app" and "user" in cookies
        for _ in range(4):
            code, _, token = await _page(base, cookies)
            assert code == 200 and token
            assert await _websocket(base, token, cookies) == "document"
        # Logged in, a token the server did not sign still opens nothing (signed sessions).
        assert await _websocket(base, made_up, cookies) in ("closed", "refused 403")

    asyncio.run(scenario())
    # The workers write their logs on their own: wait for the last connection's line (it
    # was seen 1-2 s late on a loaded machine) before counting.
    deadline = time.monotonic() + 15
    while log.read_text().count("ServerConnection created") < 4 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # nor should a fifth appear
    text = log.read_text()
    assert text.count("ServerConnection created") == 4, text[-3000:]
    # (Bokeh logs its refusal of the unsigned token with a traceback; nothing else failed.)
    refusals = text.count("ProtocolError: Invalid token signature")
    assert refusals == 1 and text.count("Traceback") == refusals, text[-3000:]


# -- the Results tab: the teacher's ---------------------------------------------------------
def test_the_results_tab_opens_folders_for_the_teacher_only(results_folder, monkeypatch):
    from ermviz.app.results.model import SERVED_OFF_TEXT, TEACHER_ONLY_TEXT, ResultsModel
    from ermviz.app.results.view import ResultsView

    monkeypatch.setenv("ERMVIZ_RESULTS", str(results_folder.parent))
    monkeypatch.setenv(RESULTS_ACCESS_ENV, "teacher")
    notes: list[tuple[str, str]] = []
    for user in (STUDENT, "guest", "Teacher", ""):
        model = ResultsModel(notifier=lambda level, msg: notes.append((level, msg)), user=user)
        view = ResultsView(model)
        assert model.found == [] and model.status == TEACHER_ONLY_TEXT
        assert not model.open(results_folder) and len(model.summaries) == 0
        assert notes[-1] == ("error", TEACHER_ONLY_TEXT)
        assert view.path_input.disabled and view.open_button.disabled
    teacher = ResultsModel(notifier=lambda level, msg: None, user=TEACHER)
    assert teacher.found == [str(results_folder)]
    assert teacher.open(results_folder) and len(teacher.summaries) == 1
    # Serving a class without a teacher's password: nobody; a typo in the setting: nobody.
    for policy in ("off", "teachers"):
        monkeypatch.setenv(RESULTS_ACCESS_ENV, policy)
        model = ResultsModel(notifier=lambda level, msg: None, user=TEACHER)
        assert model.status == SERVED_OFF_TEXT and not model.open(results_folder)
    monkeypatch.delenv(RESULTS_ACCESS_ENV)  # unset (Jupyter, plain panel serve): as before
    assert ResultsModel(notifier=lambda level, msg: None, user=None).open(results_folder)


@pytest.mark.browser
def test_the_served_results_tab_refuses_a_student_and_opens_for_the_teacher(
    guarded, results_folder
):
    from playwright.sync_api import sync_playwright
    from test_app_browser import CHROMIUM, CHROMIUM_ARGS

    from ermviz.app.results.model import TEACHER_ONLY_TEXT

    base, _ = guarded
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for password, allowed in ((CLASS_PW, False), (TEACHER_PW, True)):
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.set_default_timeout(60_000)
                page = context.new_page()
                page.goto(f"{base}/app")
                page.locator('input[name="password"]').fill(password)
                page.locator('button[type="submit"]').click()
                page.locator(".bk-tab", has_text="Results").first.click()
                box = page.locator("input[placeholder*='summaries']").first
                box.wait_for()
                status = page.locator(".results-status").first
                if not allowed:
                    assert box.is_disabled()
                    assert TEACHER_ONLY_TEXT.split(";")[0] in status.inner_text()
                else:
                    box.fill(str(results_folder))
                    box.press("Enter")
                    page.locator('.results-status[data-level="success"]').first.wait_for()
                context.close()
        finally:
            browser.close()


# -- with --procs N, one warm-up compiles for all ------------------------------------------
def test_worker_0_compiles_and_the_other_workers_follow_its_progress(tmp_path, monkeypatch):
    from ermviz import workers

    shared = tmp_path / "warmup.jsonl"
    monkeypatch.setattr(workers, "share_path", lambda master=None: shared)
    monkeypatch.setattr(workers, "FOLLOW_PERIOD", 0.02)
    lines = [{"plan": [{"label": "FW"}]}, {"start": 0}, {"done": 0, "seconds": 0.1}]
    script = "import json\n" + "".join(f"print(json.dumps({m!r}))\n" for m in lines)
    argv = [sys.executable, "-c", script]
    kwargs = {"stdout": subprocess.PIPE, "stdin": subprocess.DEVNULL, "text": True}

    # Outside a multi-process server: the plain child process.
    monkeypatch.setattr(workers, "task_id", lambda: None)
    solo = workers.popen(argv, **kwargs)
    assert isinstance(solo, subprocess.Popen) and solo.wait() == 0 and not shared.exists()
    # Worker 1 starts first: it waits for worker 0's file, then reads what worker 0 reads.
    monkeypatch.setattr(workers, "task_id", lambda: 1)
    follower = workers.popen(argv, **kwargs)
    assert not hasattr(follower, "pid")  # no process of its own
    monkeypatch.setattr(workers, "task_id", lambda: 0)
    leader = workers.popen(argv, **kwargs)
    assert [json.loads(ln) for ln in leader.stdout] == lines and leader.wait() == 0
    assert shared.stat().st_mode & 0o777 == 0o600
    assert [json.loads(ln) for ln in follower.stdout] == lines
    assert follower.poll() == 0 and follower.wait() == 0
    # A worker 0 that died mid-way, restarted by the master, replaces the file: a worker
    # following the old one switches to the new one (and reads it from its start).
    import threading

    shared.unlink()
    shared.write_text("".join(json.dumps(m) + "\n" for m in lines[:2]))  # (no exit line)
    seen: list[dict] = []
    late = workers._Following(shared)
    reader = threading.Thread(target=lambda: seen.extend(json.loads(ln) for ln in late.stdout))
    reader.start()
    deadline = time.monotonic() + 30
    while len(seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert seen == lines[:2]
    restarted = workers.popen(argv, **kwargs)
    assert [json.loads(ln) for ln in restarted.stdout] == lines
    reader.join(30)
    assert not reader.is_alive() and seen == lines[:2] + lines and late.poll() == 0
    # A follower stopped (the server exits) ends at once, file or not.
    stopped = workers._Following(tmp_path / "never-written.jsonl")
    stopped.kill()
    assert list(stopped.stdout) == [] and stopped.poll() is None
