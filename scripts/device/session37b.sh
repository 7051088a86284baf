#!/usr/bin/env bash
# Session 37's last device call: on an H200, campaign_r36a.sh (the f64 backwards timed and
# qualified at the binding rows); on another 132-SM card, campaign_h37a.sh (the f64 winners of the
# session's H100 probes qualified, accuracy only, so an H200 can time them without an accuracy pass).
# Usage: bash scripts/device/session37b.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in *H200*) exec bash scripts/device/campaign_r36a.sh "${1:-240}" ;; esac
exec bash scripts/device/campaign_h37a.sh "${1:-240}"
