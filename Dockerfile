# One image for the server and its AI workers; docker-compose.yml runs it.
#
# The build stage makes a wheel of the project alone; the image that runs installs it and
# keeps no source tree, so the package that `discus` imports is the only copy there is and
# the one the warm-up below compiles.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY games games
COPY ai ai
COPY server server
COPY clients clients
COPY bench bench
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
# Dependencies exactly as locked (hash-checked), then the project without resolving again.
COPY requirements.lock /tmp/requirements.lock
RUN pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock \
    && rm /tmp/requirements.lock
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir --no-deps /tmp/wheels/*.whl && rm -r /tmp/wheels

# Not root. /data (the volume) holds the server secret, and SQLite when no DATABASE_URL is
# set; numba's cache lives where this user can write it: numba checks that it can write a
# cache directory before it reads one, and skips a read-only one, compiling anew.
RUN useradd --system --uid 10001 --no-create-home --home-dir /nonexistent discus \
    && mkdir -p /data /var/cache/discus/numba \
    && chown discus:discus /data /var/cache/discus/numba
ENV DISCUS_DATA_DIR=/data \
    NUMBA_CACHE_DIR=/var/cache/discus/numba \
    PYTHONUNBUFFERED=1
# `discus migrate` finds the migrations in the working directory.
WORKDIR /app
COPY migrations migrations
USER discus

# Compile the installed engines into the cache, as the user and with the cache directory
# that `discus serve` will have; the second run fails the build unless a fresh process
# (as a container start is) loads every kernel from the cache. The cache is keyed to this
# CPU: build the image on the kind of host that runs it (compose builds it there).
RUN discus warm-up && discus warm-up --check

EXPOSE 8000
CMD ["discus", "serve", "--host", "0.0.0.0", "--port", "8000"]
