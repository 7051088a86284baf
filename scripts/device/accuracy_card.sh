# Sourced first by the accuracy-only campaigns (campaign_h31a, h32c, h34a, h37a and r24b.sh): prints the card
# and its SM count (SMS), and ends the call unmeasured on a card without 132 SMs, whose accuracy
# would not count for the H200's table (measurements_db.aggregates.evidence_runs takes accuracy
# from measured runs with the SM count of the chosen card's timing runs: an H100 80GB HBM3 and an
# H200 both have 132, and the runner sizes its grids, so the dw reduction order, from it).
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $SMS SMs"
[ "$SMS" = 132 ] || { echo "not 132 SMs: its accuracy would not count; nothing measured"; exit 0; }
