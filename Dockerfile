# theloop in a container: the same one start command, `errbot -c config.py`, configured
# entirely by THELOOP_* environment variables (docs/deploy.md).
#   docker build -t theloop .
#   docker run -d --name theloop -e THELOOP_SLACK_BOT_TOKEN -e THELOOP_SLACK_APP_TOKEN \
#     -e THELOOP_WEBHOOK_SECRET -p 127.0.0.1:3141:3141 -v theloop-data:/data \
#     -v "$PWD/theloop.yaml:/app/theloop.yaml:ro" theloop
# The settings file must be mounted: THELOOP_CONFIG names it, and a named file that is
# missing stops the bot at start rather than running it on defaults.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# The dependencies first: a code change does not reinstall them.
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY config.py slack-app-manifest.yaml ./
COPY plugins ./plugins
COPY .errbot-parts ./.errbot-parts

# Not root; it owns only its data directory, which outlives the container.
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin theloop \
    && mkdir -p /data \
    && chown theloop /data
USER theloop
VOLUME ["/data"]

# Listen beyond the container's loopback; publish the port to the host's loopback (or a
# TLS proxy) only. THELOOP_CONFIG names the YAML settings file, mounted read-only.
ENV THELOOP_DATA_DIR=/data \
    THELOOP_HTTP_HOST=0.0.0.0 \
    THELOOP_HTTP_PORT=3141 \
    THELOOP_CONFIG=/app/theloop.yaml
EXPOSE 3141

# 200 while storage is writable and the workers are alive; 503 (with the reason) or no
# answer is unhealthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['THELOOP_HTTP_PORT'] + '/theloop/health', timeout=4)"]

CMD ["errbot", "-c", "config.py"]
