"""Settings for ranking-lab, read from the environment.

Development is the default (DEBUG on, SQLite under var/). Production is `DJANGO_DEBUG=0`, which
requires DJANGO_SECRET_KEY and DJANGO_ALLOWED_HOSTS and turns on every `check --deploy` setting.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int, minimum: int = 0) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < minimum:
        raise ImproperlyConfigured(f"{name} must be a whole number of at least {minimum} (it is {value!r}).")
    return int(value)


DEBUG = env_bool("DJANGO_DEBUG", True)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if h.strip()]

if DEBUG:
    # A fixed key is fine for local development only; production refuses to start without its own.
    SECRET_KEY = SECRET_KEY or "django-insecure-ranking-lab-development-only-key-0123456789"
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["127.0.0.1", "localhost", "[::1]", "testserver"]
else:
    if len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("DJANGO_DEBUG=0 needs DJANGO_SECRET_KEY (at least 50 random characters).")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("DJANGO_DEBUG=0 needs DJANGO_ALLOWED_HOSTS (comma-separated host names).")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "django_tasks_db",
    "annotator",
    "evaluation.apps.EvaluationConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "annotator.web.headers.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # After the user and htmx are known: a post it refuses is answered with a page of the app.
    "annotator.web.middleware.RejectNulCharactersMiddleware",
    "annotator.web.middleware.PrivatePagesMiddleware",
    "annotator.web.middleware.BrowserTimeZoneMiddleware",
    "annotator.web.middleware.DatabaseBusyMiddleware",
    # A project page other than the grading page's settles the query its editor left.
    "annotator.grading.leaving.LeaveOpenQueryMiddleware",
    # Last, as django-axes asks: it turns a refused sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "annotator.urls"
# A post without session or CSRF cookie comes from a signed-out person: to the login page.
CSRF_FAILURE_VIEW = "annotator.web.http.csrf_failure"
WSGI_APPLICATION = "annotator.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "annotator.web.context_processors.project",
                "annotator.projects.demo_password.demo_password_warning",
            ],
        },
    },
]

# SQLite under var/ is the embedded default; DATABASE_URL (e.g. postgres://...) overrides it.
VAR_DIR.mkdir(exist_ok=True)
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DJANGO_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let a grading burst from several editors serialise instead of failing.
    # IMMEDIATE: a transaction takes the write lock when it begins (waiting up to the timeout), so
    # what it reads is still true when it writes. With SQLite's default (deferred), two
    # transactions that both read first cannot both upgrade to writing: one fails at once with
    # "database is locked", whatever the timeout (seen: two owners publishing criteria together).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # No JIT compilation: the pages' queries read a set's rows through partial indexes and run in
    # milliseconds, but the planner's row estimates cross JIT's threshold and compiling took 30 ms.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c jit=off")

# Job progress is written on a second connection to the same database, outside the job's own
# transaction, so the page watching a job sees it move (annotator/jobs/services.py). SQLite has one
# writer at a time, so there progress goes through the job's connection.
if DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
    DATABASES["jobs"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}

# Background jobs (annotator/jobs): django.tasks with the database backend; `manage.py db_worker`
# runs them (`make run` starts one beside the web server).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# The grading page settles the pairs an editor completed when they leave the query, or once they
# have done nothing on it for this long (the page says so): annotator/grading/settlement.py.
GRADING_IDLE_SETTLE = timedelta(minutes=env_int("DJANGO_GRADING_IDLE_MINUTES", 15, minimum=1))
# A running job that reported nothing for this long is marked failed: its worker was killed or hung.
JOB_STALL_SECONDS = env_int("DJANGO_JOB_STALL_SECONDS", 900, minimum=1)
# Work this small runs inside the request that starts it, through the same job: an import file up to
# this many bytes, a freeze of up to this many pairs, a comparison of runs of up to this many
# queries. Larger work goes to a worker.
JOB_INLINE_LIMITS = {
    "import": env_int("DJANGO_JOB_INLINE_IMPORT_BYTES", 1_000_000, minimum=0),
    "freeze": env_int("DJANGO_JOB_INLINE_FREEZE_PAIRS", 20_000, minimum=0),
    "compare": env_int("DJANGO_JOB_INLINE_COMPARE_QUERIES", 2_000, minimum=0),
    "export": env_int("DJANGO_JOB_INLINE_EXPORT_JUDGMENTS", 100_000, minimum=0),
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Sign-in throttling (django-axes): it counts failures in the database, so the limits hold across
# gunicorn workers and restarts, and its admin and `axes_reset_*` commands unlock. Its backend
# comes first so that a locked account is refused before the password is even checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_HANDLER = "annotator.projects.sign_in.AccountOrAddressHandler"
# An account locks after this many failures from anywhere; an address after its own, larger
# allowance over any accounts (several people may share one office address).
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = env_int("DJANGO_LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("DJANGO_LOGIN_ADDRESS_FAILURE_LIMIT", 20, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("DJANGO_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_CALLABLE = "annotator.projects.sign_in.locked_out"
AXES_CLIENT_IP_CALLABLE = "annotator.projects.sign_in.client_address"
# Behind N reverse proxies that append to X-Forwarded-For, the client is the Nth address from the
# end; with 0, REMOTE_ADDR (otherwise every sign-in would count against the proxy's address).
LOGIN_PROXY_COUNT = env_int("DJANGO_PROXY_COUNT", 0)

# Password reset mails: printed to the console unless DJANGO_EMAIL_HOST names an SMTP server.
# MAILERS is Django 6.1's mail setting (the EMAIL_* ones are deprecated).
_email_host = os.environ.get("DJANGO_EMAIL_HOST", "")
if _email_host:
    _ssl = env_bool("DJANGO_EMAIL_SSL", False)
    _tls = env_bool("DJANGO_EMAIL_TLS", not _ssl)
    if _ssl and _tls:
        raise ImproperlyConfigured(
            "Set one of DJANGO_EMAIL_SSL (port 465) or DJANGO_EMAIL_TLS (port 587), not both."
        )
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": _email_host,
                "port": env_int("DJANGO_EMAIL_PORT", 465 if _ssl else 587, minimum=1),
                "username": os.environ.get("DJANGO_EMAIL_USER", ""),
                "password": os.environ.get("DJANGO_EMAIL_PASSWORD", ""),
                "use_tls": _tls,
                "use_ssl": _ssl,
                "timeout": 20,
            },
        }
    }
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
DEFAULT_FROM_EMAIL = os.environ.get("DJANGO_DEFAULT_FROM_EMAIL", "ranking-lab <webmaster@localhost>")
PASSWORD_RESET_TIMEOUT = 60 * 60 * 24  # a reset link works for a day

# In production, owners see a warning on every page while a demo account keeps the published
# password (annotator/projects/demo_password.py). Tests run with DEBUG off, so it is its own flag.
WARN_DEMO_PASSWORD = not DEBUG

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
# One catalog for the whole app (templates included), kept inside the annotator package.
LOCALE_PATHS = [BASE_DIR / "annotator" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request when it is missing
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Uploads: imports stream from memory up to this size, larger files spill to a temp file.
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# Only this site's own files run or style a page: no inline script, handler (onsubmit=) or style
# attribute, no eval (htmx's allowEval is off in base.html), no plug-ins, no framing. Pages load
# everything from static/; htmx requests go back to the same origin. Django's DEBUG error pages
# lift the policy themselves (they are inline).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# Browser features the app never uses, switched off for it and for anything it could be made to
# load (annotator.web.headers): feature -> origins allowed, none here. Only names Chromium knows:
# it logs an unknown one on every page (Linux builds know no bluetooth or web-share).
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "encrypted-media",
        "gamepad",
        "geolocation",
        "gyroscope",
        "hid",
        "idle-detection",
        "local-fonts",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "picture-in-picture",
        "publickey-credentials-get",
        "screen-wake-lock",
        "serial",
        "usb",
        "xr-spatial-tracking",
    )
}


def env_megabytes(name: str, default: int) -> int:
    """A size in bytes from a whole number of megabytes (MiB) in the environment."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default * 1024 * 1024
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise ImproperlyConfigured(f"{name} must be a whole number of megabytes (1 or more), not {value!r}.")
    return int(value) * 1024 * 1024


# The largest file each upload form takes (candidates: all the files of one upload together),
# refused before it is read (annotator.web.uploads.within_limit). DJANGO_UPLOAD_LIMIT_MB_<KIND>
# overrides one. The commands (manage.py import_*, evaluate) read the owner's own disk: no limit.
UPLOAD_LIMITS = {
    kind: env_megabytes(f"DJANGO_UPLOAD_LIMIT_MB_{kind.upper()}", default)
    for kind, default in {
        "documents": 100,
        "queries": 20,
        "candidates": 100,
        "runs": 200,
        "pools": 20,
    }.items()
}

if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
    CSRF_TRUSTED_ORIGINS = [f"https://{h}" for h in ALLOWED_HOSTS if not h.startswith(".")]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"one_line_403": {"()": "annotator.web.log_filters.OneLineForbidden"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["one_line_403"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
    # Django's own "django" logger writes to a console handler of its own while DEBUG is on (the
    # default of `make run`), traceback and all, and again through the root: one handler, this one,
    # so each line is logged once. INFO in development, as Django has it (e.g. the autoreloader's
    # line).
    "loggers": {
        "django": {
            "handlers": ["console"],
            "level": os.environ.get("DJANGO_LOG_LEVEL", "INFO" if DEBUG else "WARNING"),
            "propagate": False,
        }
    },
}
