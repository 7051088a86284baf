#!/usr/bin/env bash
# On the GPU: kill -9 a real `measure` campaign mid-unit (driver and session processes together),
# show what it left, then finish it with --resume and check the store: every unit measured by
# every session exactly once, and the merged file is copied out to be imported (twice) into a store.
#   bash scripts/device/kill_resume.sh OUTDIR
set -u
OUTDIR=${1:-/tmp/kill_resume}
W=/tmp/kr; rm -rf "$W"; mkdir -p "$W" "$OUTDIR"
ARGS=(--H 512,1536 --T 1,256,4096 --forms plain --w-dtypes fp32
      --programs bwd.pair.p2x.w8,bwd.twosum_pair.p2x.w8,fwd.row.r1.w4 --peers peer.eager
      --sessions 2 --inputs-per-family 8 --work-dir "$W")
setsid python -m cake_router measure "${ARGS[@]}" > "$OUTDIR/first.log" 2>&1 &
PID=$!
# Wait until session 1 has finished two units, then kill inside the third.
for _ in $(seq 1 240); do
  n=$(grep -v '^#' "$W/session-s1.progress" 2>/dev/null | wc -l)
  [ "${n:-0}" -ge 2 ] && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.5
done
sleep 2
kill -9 -- "-$PID"
wait "$PID" 2>/dev/null
echo "killed after $(grep -v '^#' "$W/session-s1.progress" | wc -l) units of session 1" | tee "$OUTDIR/summary.txt"
{ echo "--- left behind:"; ls -la "$W"; wc -c "$W"/session-*.jsonl; tail -c 200 "$W/session-s1.jsonl"; echo;
  cat "$W"/session-*.progress; } >> "$OUTDIR/summary.txt" 2>&1
python -m cake_router measure "${ARGS[@]}" --resume > "$OUTDIR/resume.log" 2>&1
echo "resume rc=$?" | tee -a "$OUTDIR/summary.txt"
python - "$W" >> "$OUTDIR/summary.txt" 2>&1 <<'PY'
import collections, json, sys
from pathlib import Path
w = Path(sys.argv[1])
recs = [json.loads(l) for l in (w / "evidence.jsonl").read_text().splitlines() if l.strip()]
units = collections.Counter()
for r in recs:
    if r["kind"] == "timing" and r.get("copy", 0) == 0:
        units[(r["session"], r["H"], r["T"], r["program"], r["op"], r.get("round"))] += 1
dups = {k: v for k, v in units.items() if v > 1}
per_session = collections.Counter((k[0], k[1], k[2]) for k in units)
print("timing series:", len(units), "duplicated:", len(dups))
print("units per session:", sorted(collections.Counter(k[0] for k in per_session).items()))
PY
cp "$W/evidence.jsonl" "$OUTDIR/evidence.jsonl"
cat "$OUTDIR/summary.txt"
