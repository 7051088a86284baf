#!/usr/bin/env bash
# Session 27's last device calls: on an H200, session27.sh (campaign_r23a, then session26.sh); on any
# other card nothing (the H100 work of this session is done: bench/results/h100-2026-12-06c).
# Usage: bash scripts/device/session27d.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) exec bash scripts/device/session27.sh "${1:-540}" ;; esac
echo "not an H200: nothing measured"
