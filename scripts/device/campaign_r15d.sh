#!/usr/bin/env bash
# H200 round 15d (session 15): the routed 2xfwd+bwd steps with session 15's table (the A/A-floor
# and neutral-rule fixes re-routed 48 forward spans), at the step rows the bench compares with a
# peer and marked † (timed with an older forward route): T <= 4096, every form.
PREFIX=r15d; . scripts/device/campaign_begin.sh ${1:-300}
HS=$(python -c "
import json
t = json.load(open('cake_kernels/routes/sm_90a.json'))
print(','.join(sorted({w['program'] for k in t['routes'] if k['op'] == 'fwd' for w in k['windows'] if w['program'].endswith('.hs')})))")
python scripts/device/warm_compile.py --programs $HS --forms plain > $W/warm-steps.log 2>&1; tail -1 $W/warm-steps.log
S="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --programs routed --peers none --ops 2xfwd+bwd"
run steps-plain --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,256,4096 $S --wave-units 14
run steps-forms --forms heads_contiguous,heads_strided,residual --w-dtypes fp32,bf16 --T 1,16,256,4096 $S --wave-units 12
campaign_end
