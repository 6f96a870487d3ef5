FROM python:3.11-slim
RUN useradd --create-home --uid 10001 ronda
WORKDIR /srv
# Dependencies from the pinned lock first (a layer that changes only with the lock), then the app.
COPY requirements.lock ./
RUN pip install --no-cache-dir --no-deps -r requirements.lock
COPY pyproject.toml README.md ./
COPY app ./app
COPY workers ./workers
# app/static/rules.md links to docs/rules.md: the wheel takes the file itself.
COPY docs ./docs
RUN pip install --no-cache-dir --no-deps .
# Each gunicorn worker and `ronda worker` process writes its metrics here; /metrics adds them up.
ENV PYTHONUNBUFFERED=1 PROMETHEUS_MULTIPROC_DIR=/tmp/ronda-metrics
USER ronda
EXPOSE 8000 9100
# gevent workers, streams ended with a reconnect hint on SIGTERM, JSON logs: app/ops/gunicorn_conf.py.
CMD ["gunicorn", "-c", "python:app.ops.gunicorn_conf"]
