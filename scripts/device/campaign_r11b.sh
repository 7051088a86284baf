#!/usr/bin/env bash
# H200 campaign round 11b (written in session 10; not run yet). Carries .whlA then .whlB as round 10
# did (Liger in the first call, QuACK's CUTLASS DSL joined from its two parts in the second).
# The `.wx` forwards where round 10b ran out of time: H 5120 (FP32 weight), 6144 and 8192, T 1-4096,
# beside their bases, Liger, QuACK and torch.compile; round 9's largest forward gap is there (H 6144
# FP32 T 1: 2.62 against Liger's 1.82 us). Then contiguous heads BF16 in a second session.
PREFIX=r11b; . scripts/device/campaign_begin.sh
WX=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if n.endswith('.wx')))")
P=$WX,${WX//.wx/}
F="--T 1,16,256,4096 --programs $P --ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 6"
END=$(( END0 - ${HSECS:-100} ))
run wx-wide --H 6144,8192 --forms plain --w-dtypes fp32,bf16 --peers peer.liger,peer.quack.heuristic,peer.torch_compile.default $F
run wx-5120 --H 5120 --forms plain --w-dtypes fp32 --peers peer.liger,peer.quack.heuristic,peer.torch_compile.default $F
END=$END0
run wx-heads --forms heads_contiguous --w-dtypes bf16 --peers peer.liger,peer.torch_compile.default $F
campaign_end
