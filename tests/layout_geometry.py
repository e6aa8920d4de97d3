"""Geometry of the page's figures as the browser drew them (issue 42's laptop screen), for
the browser tests: what overlaps what, in page pixels.

:data:`FIGURES_JS` reads every figure drawn on a page from BokehJS's views: its canvas,
frame, toolbar and x axis boxes, its title's lines measured in their font, its axis
labels and, for the glyphs drawn on the canvas (not DOM elements), each text label's box
and each marker's circle and line segment, mapped from data to screen coordinates
through the frame's scales (the label's pixel offset, alignment and baseline applied, its
text measured in its font). :func:`figure_problems` says in words what is wrong with one
figure: a label cut by the frame, a marker or line over a label, a title wider than its
figure or running into the toolbar.
"""

from __future__ import annotations

import math
from typing import Any

FIGURES_JS = """() => {
  const out = [];
  const ctx = document.createElement("canvas").getContext("2d");
  const views = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure")];
  const val = (spec, data, i, dflt) => {
    if (spec == null) return dflt;
    if (typeof spec !== "object") return spec;
    if (spec.value !== undefined) return spec.value;
    if (spec.field !== undefined && data[spec.field]) return data[spec.field][i];
    return dflt;
  };
  for (const pv of views) {
    const r = pv.canvas.el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2 || !pv.el.isConnected) continue;
    const fb = pv.frame.bbox, xs = pv.frame.x_scale, ys = pv.frame.y_scale;
    const tb = pv.toolbar_panel ? pv.toolbar_panel.el.getBoundingClientRect() : null;
    const m = pv.model;
    const title = m.title ? m.title.text : "";
    const font = m.title
      ? `${m.title.text_font_style} ${m.title.text_font_size} ${m.title.text_font}` : "";
    ctx.font = font;
    const fig = {
      title, title_font: font,
      title_widths: title ? title.split("\\n").map((t) => ctx.measureText(t).width) : [],
      canvas: [r.left, r.top, r.width, r.height],
      frame: [r.left + fb.left, r.top + fb.top, fb.width, fb.height],
      toolbar: tb && tb.width > 0 ? [tb.left, tb.top, tb.width, tb.height] : null,
      xlabels: m.below.map((a) => a.axis_label).filter((x) => x != null),
      // The x axis with its label (canvas-drawn): its box on the page.
      xaxis: m.below.filter((a) => a.axis_label !== undefined).map((a) => {
        const b = pv.renderer_views.get(a).bbox;
        return [r.left + b.left, r.top + b.top, b.width, b.height];
      })[0] || null,
      ylabels: m.left.map((a) => a.axis_label).filter((x) => x != null),
      labels: [], markers: [], segments: [],
    };
    const sx = (x) => r.left + xs.compute(x), sy = (y) => r.top + ys.compute(y);
    for (const rend of m.renderers) {
      if (rend.type !== "GlyphRenderer" || !rend.visible) continue;
      const g = rend.glyph, data = rend.data_source.data;
      const X = g.x && g.x.field ? data[g.x.field] : null;
      const Y = g.y && g.y.field ? data[g.y.field] : null;
      if (!X || !Y) continue;
      if (g.type === "Text") {
        ctx.font = `${val(g.text_font_style, data, 0, "normal")} `
          + `${val(g.text_font_size, data, 0, "16px")} ${val(g.text_font, data, 0, "helvetica")}`;
        const met = ctx.measureText("Mg");
        const h = met.fontBoundingBoxAscent + met.fontBoundingBoxDescent;
        for (let i = 0; i < X.length; i++) {
          const text = String(val(g.text, data, i, ""));
          const w = ctx.measureText(text).width;
          let x0 = sx(X[i]) + val(g.x_offset, data, i, 0);
          let y0 = sy(Y[i]) + val(g.y_offset, data, i, 0);
          const align = val(g.text_align, data, i, "left");
          const base = val(g.text_baseline, data, i, "bottom");
          if (align === "center") x0 -= w / 2; else if (align === "right") x0 -= w;
          if (base === "middle") y0 -= h / 2;
          else if (base === "bottom" || base === "alphabetic") y0 -= h;
          fig.labels.push({text, box: [x0, y0, w, h]});
        }
      } else if (g.type === "Scatter") {
        for (let i = 0; i < X.length; i++) {
          const size = val(g.size, data, i, 4);
          const alpha = Math.max(val(g.fill_alpha, data, i, 1), val(g.line_alpha, data, i, 1));
          if (!(size > 0) || alpha === 0 || !isFinite(X[i]) || !isFinite(Y[i])) continue;
          const rad = size / 2 + val(g.line_width, data, i, 1) / 2;
          fig.markers.push({name: rend.name || "", circle: [sx(X[i]), sy(Y[i]), rad]});
        }
      } else if (g.type === "Line") {
        for (let i = 0; i + 1 < X.length; i++) {
          if ([X[i], Y[i], X[i + 1], Y[i + 1]].every(Number.isFinite)) {
            fig.segments.push([sx(X[i]), sy(Y[i]), sx(X[i + 1]), sy(Y[i + 1])]);
          }
        }
      }
    }
    out.push(fig);
  }
  return out;
}"""

#: Sub-pixel rounding allowed (page pixels).
SLACK = 1.0
#: Least room between a title's end and its figure's toolbar (page pixels).
TITLE_GAP = 4.0


def _inside(box: list[float], outer: list[float], slack: float = SLACK) -> bool:
    x, y, w, h = box
    ox, oy, ow, oh = outer
    return (
        x >= ox - slack
        and y >= oy - slack
        and x + w <= ox + ow + slack
        and y + h <= oy + oh + slack
    )


def _overlap(a: list[float], b: list[float], slack: float = SLACK) -> bool:
    return (
        a[0] + a[2] > b[0] + slack
        and b[0] + b[2] > a[0] + slack
        and a[1] + a[3] > b[1] + slack
        and b[1] + b[3] > a[1] + slack
    )


def _circle_hits(box: list[float], circle: list[float]) -> bool:
    """Whether the disc ``circle`` (cx, cy, r) reaches into ``box`` (x, y, w, h)."""
    cx, cy, r = circle
    x, y, w, h = box
    nx, ny = min(max(cx, x), x + w), min(max(cy, y), y + h)
    return math.hypot(cx - nx, cy - ny) < r - SLACK


def _segment_hits(box: list[float], seg: list[float]) -> bool:
    """Whether the segment (x0, y0, x1, y1) crosses the interior of ``box`` (Liang-Barsky
    clipping, the box shrunk by :data:`SLACK`)."""
    x0, y0, x1, y1 = seg
    bx, by, bw, bh = box
    left, right, top, bottom = bx + SLACK, bx + bw - SLACK, by + SLACK, by + bh - SLACK
    if left >= right or top >= bottom:
        return False
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def figure_problems(fig: dict[str, Any], whole: bool = True) -> list[str]:
    """What hides or cuts a part of ``fig`` (one figure of :data:`FIGURES_JS`), in words:
    a text label outside the frame (the canvas clips it there; with ``whole`` False, as
    for a zoom, only one partly outside), a marker or a line over a label, a title line
    wider than the figure or running into its toolbar."""
    name = fig["title"].replace("\n", " ")[:50] or "(untitled)"
    out = []
    for label in fig["labels"]:
        box, text = label["box"], label["text"]
        if not whole and not _overlap(box, fig["frame"], 0.0):
            continue  # out of this zoom's view: not drawn
        if not _inside(box, fig["frame"]):
            out.append(f"{name}: label {text!r} {_r(box)} cut by the frame {_r(fig['frame'])}")
        for marker in fig["markers"]:
            if _circle_hits(box, marker["circle"]):
                out.append(
                    f"{name}: label {text!r} {_r(box)} under a marker {marker['name']!r} "
                    f"{_r(marker['circle'])}"
                )
                break
        for seg in fig["segments"]:
            if _segment_hits(box, seg):
                out.append(f"{name}: label {text!r} {_r(box)} crossed by a line {_r(seg)}")
                break
    widths = fig["title_widths"]
    if widths:
        cx, cy, cw, _ = fig["canvas"]
        fx, fy = fig["frame"][0], fig["frame"][1]
        # A title touching the tools reads as running into them: keep a few pixels apart.
        title = [fx, cy, max(widths) + TITLE_GAP, fy - cy]
        if fx + max(widths) > cx + cw + SLACK:
            out.append(
                f"{name}: title {max(widths):.0f} px wide runs past the figure {_r(fig['canvas'])}"
            )
        if fig["toolbar"] is not None and _overlap(title, fig["toolbar"]):
            out.append(f"{name}: title {_r(title)} runs into the toolbar {_r(fig['toolbar'])}")
    return out


def _r(values: list[float]) -> list[int]:
    return [round(v) for v in values]
