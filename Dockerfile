# The image deploy/ runs (`vcflow operator`, `vcflow webhook`): ghcr.io/vcflow/vcflow:<version>,
# <version> being pyproject.toml's. Not built in CI:
#   docker build -t ghcr.io/vcflow/vcflow:$(python -c 'import tomllib;print(tomllib.load(open("pyproject.toml","rb"))["project"]["version"])') .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /build
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install . && rm -rf /build

# A numeric non-root user, so that runAsNonRoot can check it (deploy/ runs it as 10001).
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin vcflow
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["vcflow"]
CMD ["--help"]
