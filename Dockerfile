FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY contracts contracts
COPY libs libs
COPY services services
COPY modelguard modelguard
COPY fixtures fixtures
RUN pip install --no-cache-dir .
USER 10001
