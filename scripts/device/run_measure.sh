# Sourced by the device campaign scripts (from round 4 on): `run NAME ARGS...` runs one
# `cake_router measure` into $W/NAME inside the time left before $END (skipped under $MIN_LEFT
# seconds), logs to $W/NAME.log and gzips its evidence to $W/$PREFIX-NAME.jsonl.gz.
# Needs W, END and PREFIX set; a name starting with q is skipped when OK=0 (the oracle check failed);
# a name listed in $SKIP (comma-separated) is skipped (another script of the same call ran it).
run() {
  local name=$1; shift
  case ",${SKIP:-}," in *",$name,"*) echo "$name: skipped (SKIP)"; return ;; esac
  [ "${OK:-1}" = 0 ] && [ "${name:0:1}" = q ] && { echo "$name: skipped (fused oracle check failed)"; return; }
  local left=$(( END - $(date +%s) - 10 ))
  [ $left -lt ${MIN_LEFT:-30} ] && { echo "$name: skipped (no time left)"; return; }
  timeout $left python -m cake_router measure "$@" --budget-minutes $(python3 -c "print(round(($left-15)/60,2))") \
    --work-dir $W/$name > $W/$name.log 2>&1
  echo "$name: rc=$? $(grep -c records $W/$name.log) unit lines"
  if [ ! -f $W/$name/evidence.jsonl ] && [ -d $W/$name ]; then
    # Killed by the time limit before its merge (a wave outlasted the budget): keep every finished unit.
    python -c "import sys; from pathlib import Path; from cake_router.measure.campaign import merge, session_files; \
d = Path(sys.argv[1]); files = session_files(d); files and print(merge(files, d / 'evidence.jsonl'), 'records merged after the kill')" $W/$name
  fi
  [ -f $W/$name/evidence.jsonl ] && gzip -c $W/$name/evidence.jsonl > $W/$PREFIX-$name.jsonl.gz
}
