# Sourced by the device campaign scripts from round 9 on, with PREFIX set (e.g. PREFIX=r9a):
# installs the carried peers' wheels (setup_peers.sh), sets W=/tmp/c<round> (the work folder),
# FINAL=$OUT, END0 = now + ${1:-540} s (the call's own budget) and END=END0, and defines `run`
# (run_measure.sh). End a campaign with campaign_end.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers-$PREFIX.log 2>&1; cat /tmp/setup_peers-$PREFIX.log
FINAL=$OUT; W=/tmp/c${PREFIX#r}; mkdir -p $W
END0=$(( $(date +%s) + ${1:-540} )); END=$END0
. scripts/device/run_measure.sh

# Packs the logs, plans, failure files and evidence of every run into $OUT/$PREFIX.tar.gz.
campaign_end() {
  (cd $W && tar czf $FINAL/$PREFIX.tar.gz *.log */plan.json */*.failures.jsonl $PREFIX-*.jsonl.gz 2>/dev/null)
  ls -la $FINAL
}
