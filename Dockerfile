FROM python:3.12-slim
WORKDIR /srv
COPY pyproject.toml README.md ./
COPY app ./app
COPY workers ./workers
RUN pip install --no-cache-dir ".[production]"
ENV PYTHONUNBUFFERED=1
EXPOSE 8000
# gevent workers: an open event stream or long poll costs a greenlet, not a thread; state lives in Redis.
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--workers", "2", "--worker-class", "gevent", \
     "--worker-connections", "1000", "--access-logfile", "-", "app:create_app()"]
