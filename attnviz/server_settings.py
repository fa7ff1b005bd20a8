"""A server's settings: which models it offers, who may name other models, how big a model and a text may be.

Read from one TOML file, `.streamlit/attnviz.toml` beside app.py (Streamlit's own folder for its settings;
another file with ATTNVIZ_SETTINGS=path), documented in that file itself. A setting that is missing takes
its default; one that is wrong takes its default too and is named in `problems`, so a typo in a lecture's
settings gives a clear message and a server that still starts, on the safe side.

No streamlit here: deploy/class_server.py reads the same settings to report problems before a class.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import urlsplit

from attnviz.lecture.store.base import StoreLimits

SETTINGS_VARIABLE = "ATTNVIZ_SETTINGS"  # another settings file than .streamlit/attnviz.toml
BALANCER_VARIABLE = "ATTNVIZ_BEHIND_BALANCER"  # "1": this process serves through a balancer (class_server sets it)
STORE_URL_VARIABLE = "ATTNVIZ_STORE_URL"  # a Redis URL: the lecture store every process shares (class_server sets it)
FREE_FORM_POLICIES = ("local", "everyone", "nobody")
LECTURER_POLICIES = ("local", "passphrase", "everyone")
STORE_BACKENDS = ("memory", "redis")
REDIS_SCHEMES = ("redis", "rediss", "unix")


@dataclass(frozen=True)
class ServerSettings:
    """What a server allows. The defaults are what a lecturer's laptop needs and safe for a class."""

    offered: tuple[str, ...] | None = None  # the models' short names (catalog.OFFERED); None: every one attnviz ships
    free_form: str = "local"  # who may name a hub model or a folder: "local" (a browser on this machine, never
    #                           behind a balancer), "everyone", or "nobody"
    behind_balancer: bool = False  # every browser arrives from the balancer's address: none can be told local
    max_weights_gb: float = 2.0  # the biggest model (float32 weights) a hub name or a folder may load
    max_tokens: int = 512  # the longest text (in the model's tokens) a page runs
    public_url: str = ""  # the address students reach the app at ("" : found from the server's own address)
    lecturers: str = "local"  # who may start a room and upload a plan (ui/lecture/lecturer.py): "local" (a browser on
    #                           this machine, or one that typed the passphrase), "passphrase" (only that), "everyone"
    lecture_passphrase: str = ""  # the lecturers' passphrase ("" : none; under "passphrase", nobody is admitted)
    store_backend: str = "memory"  # the lecture store: "memory" (this process) or "redis" (shared by processes)
    store_url: str = ""  # the Redis URL when store_backend is "redis"
    store_limits: StoreLimits = StoreLimits()
    problems: tuple[str, ...] = field(default=(), compare=False)  # what was wrong in the file (defaults used)

    @property
    def max_weights_bytes(self) -> int:
        return int(self.max_weights_gb * 1e9)


def settings_path(root: Path, environ=os.environ) -> Path:
    """The settings file a server at `root` (app.py's folder) reads."""
    return Path(environ.get(SETTINGS_VARIABLE) or root / ".streamlit" / "attnviz.toml")


def read_settings(path: Path, known_models: tuple[str, ...], environ=os.environ) -> ServerSettings:
    """The settings in `path` (defaults where it is silent or wrong; a missing file is all defaults).

    known_models: the short names a server can offer, to check `offered` against.
    """
    problems: list[str] = []
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as err:
        raw, problems = {}, [f"{path} could not be read ({err}): every setting takes its default."]
    models, texts, server, store, lecture = (_section(raw, name, problems)
                                             for name in ("models", "texts", "server", "store", "lecture"))
    defaults = ServerSettings()
    offered = _offered(models.get("offered"), known_models, problems)
    free_form = models.get("free_form", defaults.free_form)
    if free_form not in FREE_FORM_POLICIES:
        problems.append(f"models.free_form must be one of {', '.join(map(repr, FREE_FORM_POLICIES))}, not "
                        f"{free_form!r}: using {defaults.free_form!r}.")
        free_form = defaults.free_form
    gb = _number(models, "max_weights_gb", defaults.max_weights_gb, float, problems, "models.")
    tokens = _number(texts, "max_tokens", defaults.max_tokens, int, problems, "texts.")
    behind = server.get("behind_balancer", False)
    if not isinstance(behind, bool):
        problems.append(f"server.behind_balancer must be true or false, not {behind!r}: using true (the safe side).")
        behind = True
    behind = behind or environ.get(BALANCER_VARIABLE, "").strip() not in ("", "0")
    public_url = _public_url(server.get("public_url", ""), problems)
    lecturers, passphrase = _lecturers(lecture, problems)
    backend, url = _store_backend(store, environ.get(STORE_URL_VARIABLE, "").strip(), problems)
    limits = StoreLimits(**{f.name: _number(store, f.name, f.default, type(f.default), problems, "store.")
                            for f in fields(StoreLimits)})
    return ServerSettings(offered, free_form, behind, gb, tokens, public_url, lecturers, passphrase, backend, url,
                          limits, tuple(f"{path.name}: {p}" for p in problems))


def _lecturers(lecture: dict, problems: list[str]) -> tuple[str, str]:
    """(who may lecture, the passphrase): a wrong policy takes "local", a passphrase that is not text none (never
    quoted in a message: it is a secret)."""
    policy = lecture.get("lecturers", "local")
    if policy not in LECTURER_POLICIES:
        problems.append(f"lecture.lecturers must be one of {', '.join(map(repr, LECTURER_POLICIES))}, not {policy!r}: "
                        "using 'local'.")
        policy = "local"
    passphrase = lecture.get("passphrase", "")
    if not isinstance(passphrase, str):
        problems.append("lecture.passphrase must be text in quotes: no passphrase is in use.")
        passphrase = ""
    passphrase = passphrase.strip()
    if passphrase and len(passphrase) < 8:
        problems.append("lecture.passphrase must have at least 8 characters: no passphrase is in use.")
        passphrase = ""
    if policy == "passphrase" and not passphrase:
        problems.append("lecture.lecturers = 'passphrase' needs lecture.passphrase: nobody may start a room.")
    return policy, passphrase


def _public_url(value, problems: list[str]) -> str:
    """An http(s) address with a host, without its trailing slash, or "" (with a problem when it was wrong)."""
    text = value.strip().rstrip("/") if isinstance(value, str) else None
    if text == "":
        return ""
    parts = urlsplit(text or "")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        parts = None
    if text is None or parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query \
            or parts.fragment:
        problems.append(f"server.public_url must be the app's address as students type it, such as "
                        f"\"http://10.0.0.5:8501\", not {value!r}: using the server's own address.")
        return ""
    return text


def _store_backend(store: dict, url_from_environment: str, problems: list[str]) -> tuple[str, str]:
    """(backend, Redis URL): ATTNVIZ_STORE_URL wins (the class server gives its processes its own Redis)."""
    if url_from_environment:
        if _redis_url(url_from_environment):
            return "redis", url_from_environment
        problems.append(f"{STORE_URL_VARIABLE} is not a Redis URL (redis://:password@host:port/0): using "
                        "[store] instead.")
    backend, url = store.get("backend", "memory"), store.get("url", "")
    if backend not in STORE_BACKENDS:
        problems.append(f"store.backend must be one of {', '.join(map(repr, STORE_BACKENDS))}, not {backend!r}: "
                        "using 'memory' (rooms are seen by this process only).")
        return "memory", ""
    if backend == "redis" and not _redis_url(url):
        shown = "missing" if not url else "not a Redis URL"  # the URL itself may hold a password: never shown
        problems.append(f"store.url is {shown}: with backend = 'redis' it must be redis://:password@host:port/0. "
                        "Using 'memory' (rooms are seen by this process only).")
        return "memory", ""
    return backend, url if backend == "redis" else ""


def _redis_url(url) -> bool:
    if not isinstance(url, str):
        return False
    parts = urlsplit(url.strip())
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in REDIS_SCHEMES and bool(parts.hostname or parts.path)


def _section(raw: dict, name: str, problems: list[str]) -> dict:
    section = raw.get(name, {})
    if not isinstance(section, dict):
        problems.append(f"[{name}] must be a table of settings: its settings take their defaults.")
        return {}
    return section


def _offered(value, known: tuple[str, ...], problems: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = value if isinstance(value, list) else []
    unknown = [n for n in names if n not in known]
    if not names or unknown or not all(isinstance(n, str) for n in names):
        problems.append(f"models.offered must list some of {', '.join(known)}"
                        + (f" (unknown: {', '.join(map(str, unknown))})" if unknown else "")
                        + ": offering every one.")
        return None
    return tuple(dict.fromkeys(names))


def _number(section: dict, name: str, default, kind, problems: list[str], where: str):
    value = section.get(name, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if not ok or (kind is int and not isinstance(value, int)):
        what = "a whole number above 0" if kind is int else "a number above 0"
        problems.append(f"{where}{name} must be {what}, not {value!r}: using {default}.")
        return default
    return kind(value)
