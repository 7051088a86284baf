"""Chart colours: the routed programs of a page never share a colour."""

from api.charts import PALETTE, colors_for


def test_routed_programs_get_distinct_colours_before_the_rest():
    everything = [f"bwd.prog{i:02d}" for i in range(40)]
    routed = ["bwd.prog39", "bwd.prog00", "bwd.prog16"]  # 0 and 16 would collide when cycling by sorted order
    c = colors_for(everything, first=routed)
    assert len({c[p] for p in routed}) == len(routed)
    assert set(c) == set(everything)
    assert colors_for(everything)["bwd.prog00"] == colors_for(everything)["bwd.prog16"] == PALETTE[0]  # the old collision
