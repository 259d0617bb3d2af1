# One image for the server and the AI workers; compose picks the command.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini* ./
COPY games games
COPY ai ai
COPY server server
COPY bench bench
COPY migrations migrations
RUN pip install --no-cache-dir . \
    && python -c "import ai; ai.warm_up('connect4'); ai.warm_up('othello')"
EXPOSE 8000
CMD ["discus", "serve", "--host", "0.0.0.0", "--port", "8000"]
