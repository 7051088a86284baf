#!/usr/bin/env bash
# Session 35: campaign_h34a.sh (accuracy only, 120 inputs per family, both weights, on any sm_90a card
# with 132 SMs) for the `.fw.tmc` backwards that session35.sh's variant probe found faster than the
# routed programs, packed as $OUT/h35a.tar.gz.
# Usage: PROGS=name,name UNITS="H:T,T;H:T" bash scripts/device/campaign_h35a.sh [SECONDS]
PREFIX=h35a exec bash scripts/device/campaign_h34a.sh "$@"
