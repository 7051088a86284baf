"""Plotly figure specifications (plain dicts) for the dashboard pages.

The browser draws them with the plotly.js bundled in the installed `plotly` package, served by the
app itself (`/static/plotly.min.js`), so the dashboard needs no internet. Figures are built here
from the views in `api.views`, never from anything the browser sends.
"""

from __future__ import annotations

import math

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]
T_TICKS = [1, 16, 256, 4096, 65536, 1048576, 16777216]


def colors_for(programs, first=()) -> dict[str, str]:
    """A colour per program, stable for a given set of names (sorted order).

    `first` (the routed programs of a page) take the palette's first colours, so they never share a
    colour while there are at most len(PALETTE) of them; the other programs cycle after them.
    """
    lead = sorted(set(first))
    order = lead + sorted(set(programs) - set(lead))
    return {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(order)}


def _tlabel(T: int) -> str:
    if T >= 1048576 and T % 1048576 == 0:
        return f"{T // 1048576}M"
    if T >= 1024 and T % 1024 == 0:
        return f"{T // 1024}K"
    return str(T)


def _range(lo: int, hi: int | None) -> str:
    return f"[{lo}, {'inf' if hi is None else hi}]"


def strip_figure(strips: list[dict], colors: dict[str, str], max_T: int, height_per_key: int = 28) -> dict:
    """Every key as a horizontal strip of windows over log2 T, coloured by program.

    Bars are drawn in log2(T) coordinates (a bar on plotly's log axis is awkward to place), with
    tick labels written back as T. An unbounded window is drawn to `max_T` and labelled 'inf'.
    Each bar's customdata carries (key index, window index) so a click can open its evidence.
    """
    top = math.log2(max(max_T, 2))
    traces: dict[str, dict] = {}
    labels = []
    for ki, s in enumerate(strips):
        k = s["key"]
        label = f"{k['op']} H={k['H']} {k['w_dtype']} {k['form']} {k['mode']}"
        if s.get("loud"):
            label += " (!)"
        labels.append(label)
        for wi, w in enumerate(s["windows"]):
            x0 = math.log2(w["lo"])
            x1 = top if w["hi"] is None else math.log2(w["hi"] + 1)
            tr = traces.setdefault(w["program"], {
                "type": "bar", "orientation": "h", "name": w["program"], "x": [], "base": [], "y": [],
                "marker": {"color": colors.get(w["program"], "#999"), "line": {"color": "#fff", "width": 1}},
                "hovertemplate": "%{hovertext}<extra></extra>", "hovertext": [], "customdata": [],
            })
            tr["x"].append(max(x1 - x0, 0.02))
            tr["base"].append(x0)
            tr["y"].append(label)
            tr["hovertext"].append(f"{label}<br>T {_range(w['lo'], w['hi'])}<br>{w['program']}<br>reason: {w['reason']}")
            tr["customdata"].append([ki, wi])
    ticks = [t for t in T_TICKS if math.log2(t) <= top]
    layout = {
        "barmode": "overlay", "height": 110 + height_per_key * max(len(strips), 1),
        "margin": {"l": 260, "r": 20, "t": 40, "b": 45},
        "xaxis": {"title": {"text": "T (tokens, log scale)"}, "range": [0, top],
                  "tickvals": [math.log2(t) for t in ticks], "ticktext": [_tlabel(t) for t in ticks]},
        "yaxis": {"autorange": "reversed", "categoryorder": "array", "categoryarray": labels},
        "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        "hovermode": "closest",
    }
    return {"data": list(traces.values()), "layout": layout}


def latency_figure(view: dict, colors: dict[str, str]) -> dict:
    """Latency against T for every program and peer of the key; the routed choice highlighted."""
    from api.views import chosen_at

    by_prog: dict[str, list[dict]] = {}
    for t in view["timing"]:
        by_prog.setdefault(t["program"], []).append(t)
    pinfo = {p["name"]: p for p in view["programs"]}
    data = []
    for prog, pts in sorted(by_prog.items()):
        info = pinfo.get(prog, {})
        peer = info.get("runnable") is False
        data.append({
            "type": "scatter", "mode": "lines+markers", "name": prog + (" (peer)" if peer else ""),
            "x": [p["T"] for p in pts], "y": [p["median_us"] for p in pts],
            "line": {"color": colors.get(prog, "#999"), "width": 1.5, "dash": "dot" if peer else "solid"},
            "marker": {"size": 6, "symbol": ["x" if p["noisy"] else "circle" for p in pts]},
            "opacity": 0.75 if info.get("eligible_for_mode", True) else 0.35,
            "hovertemplate": prog + "<br>T %{x}<br>%{y:.2f} us<br>%{text}<extra></extra>",
            "text": [_timing_note(p) for p in pts],
        })
    lat = {(t["program"], t["T"]): t["median_us"] for t in view["timing"]}
    xs, ys, names = [], [], []
    for T in sorted({t["T"] for t in view["timing"]}):
        p = chosen_at(view["windows"], T)
        if p is not None and (p, T) in lat:
            xs.append(T)
            ys.append(lat[(p, T)])
            names.append(p)
    if xs:
        data.append({
            "type": "scatter", "mode": "lines+markers", "name": "routed (chosen)", "x": xs, "y": ys,
            "line": {"color": "#000", "width": 4}, "marker": {"size": 10, "color": [colors.get(n, "#000") for n in names],
                                                              "line": {"color": "#000", "width": 2}},
            "text": names, "hovertemplate": "chosen: %{text}<br>T %{x}<br>%{y:.2f} us<extra></extra>",
        })
    return {"data": data, "layout": _xy_layout("latency (us, median, log)", log_y=True)}


def error_figure(view: dict, colors: dict[str, str]) -> dict:
    """dw err/tol against T (worst over families) with the budget line at 1 and the FP32 eager
    reference (worst over programs' records at each T) dotted."""
    by_prog: dict[str, list[dict]] = {}
    eager: dict[int, float] = {}
    for a in view["accuracy"]:
        if a["worst"] is not None:
            by_prog.setdefault(a["program"], []).append(a)
        for f in a["families"]:
            if f["eager_worst"] is not None:
                eager[a["T"]] = max(eager.get(a["T"], 0.0), f["eager_worst"])
    chosen = {w["program"] for w in view["windows"]}
    data = []
    for prog, pts in sorted(by_prog.items()):
        data.append({
            "type": "scatter", "mode": "lines+markers", "name": prog, "x": [p["T"] for p in pts],
            "y": [max(p["worst"], 1e-6) for p in pts],
            "line": {"color": colors.get(prog, "#999"), "width": 3 if prog in chosen else 1.5},
            "marker": {"size": 8 if prog in chosen else 5,
                       "symbol": ["circle" if p["in_budget"] is not False else "x" for p in pts]},
            "text": [f"{p['status'] or ''} {p['detail'] or ''}".strip() for p in pts],
            "hovertemplate": prog + "<br>T %{x}<br>worst err/tol %{y:.3g}<br>%{text}<extra></extra>",
        })
    if eager:
        Ts = sorted(eager)
        data.append({"type": "scatter", "mode": "lines", "name": "FP32 eager reference", "x": Ts,
                     "y": [max(eager[T], 1e-6) for T in Ts], "line": {"color": "#777", "dash": "dot", "width": 1.5}})
    layout = _xy_layout("dw err/tol (worst over families, log)", log_y=True)
    stated = sum(1 for a in view["accuracy"] if a["worst"] is None and any(f["verdict"] for f in a["families"]))
    layout["shapes"] = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": 1, "y1": 1,
                         "line": {"color": "#d62728", "width": 2, "dash": "dash"}}]
    layout["annotations"] = [{"xref": "paper", "x": 0.01, "yref": "y", "y": 0, "yanchor": "bottom", "showarrow": False,
                              "text": "budget (err/tol = 1)", "font": {"color": "#d62728"}}]
    if stated:
        # Published records often state pass/fail without a number: nothing to plot, said so.
        layout["annotations"].append({"xref": "paper", "x": 0.5, "yref": "paper", "y": 0.9, "showarrow": False,
                                      "text": f"{stated} point(s) state only a published pass/fail verdict (no err/tol "
                                              "to plot): see the windows' evidence"})
    return {"data": data, "layout": layout}


def _timing_note(p: dict) -> str:
    spread = "-" if p["spread"] is None else f"{p['spread']:.1%}"
    return f"n={p['n']} spread={spread}{' ~noisy' if p['noisy'] else ''} {p['source']}"


def _xy_layout(ytitle: str, log_y: bool) -> dict:
    return {
        "height": 380, "margin": {"l": 70, "r": 20, "t": 10, "b": 50}, "hovermode": "closest",
        "xaxis": {"type": "log", "title": {"text": "T (tokens)"}},
        "yaxis": {"type": "log" if log_y else "linear", "title": {"text": ytitle}},
        "legend": {"orientation": "h", "y": -0.2},
    }
