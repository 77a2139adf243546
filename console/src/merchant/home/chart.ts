import { scaleBand, scaleLinear } from "d3-scale";
import { line } from "d3-shape";
import { html, type SafeHtml } from "../../html.js";

/** One day of a chart: the day (YYYY-MM-DD), the bar's value and the line's. */
export interface ChartDay {
  date: string;
  bar: number;
  line: number;
}

export interface ChartOptions {
  /** Unique on the page: the svg's title and description ids start with it. */
  id: string;
  title: string;
  description: string;
  barLegend: string;
  lineLegend: string;
  /** A bar axis tick as the page's language writes it (lira, compact). */
  barTick: (value: number) => string;
  lineTick: (value: number) => string;
}

const WIDTH = 720;
const HEIGHT = 260;
const MARGIN = { top: 16, right: 48, bottom: 52, left: 64 };
const BAR = "#0e4f4a";
const LINE = "#b54708";
const INK = "#344054";

const r = (n: number) => Math.round(n * 10) / 10;

/**
 * A day chart drawn on the server as inline SVG (d3-scale for the axes, d3-shape for the
 * line): no script, nothing fetched, nothing the nonce'd CSP has to allow (presentation
 * attributes, no style attributes). Bars carry one series, the line another on its own axis.
 * The svg is one image with a title and a description; the numbers themselves go in the
 * table the caller puts next to it.
 */
export function dayChart(days: readonly ChartDay[], o: ChartOptions): SafeHtml {
  const x = scaleBand<string>()
    .domain(days.map((d) => d.date))
    .range([MARGIN.left, WIDTH - MARGIN.right])
    .paddingInner(0.2)
    .paddingOuter(0.1);
  const yBar = scaleLinear()
    .domain([0, Math.max(1, ...days.map((d) => d.bar))])
    .nice(4)
    .range([HEIGHT - MARGIN.bottom, MARGIN.top]);
  const yLine = scaleLinear()
    .domain([0, Math.max(1, ...days.map((d) => d.line))])
    .nice(4)
    .range([HEIGHT - MARGIN.bottom, MARGIN.top]);
  const half = x.bandwidth() / 2;
  const path = line<ChartDay>()
    .x((d) => (x(d.date) ?? 0) + half)
    .y((d) => yLine(d.line))(days as ChartDay[]);
  const base = HEIGHT - MARGIN.bottom;
  // Every fifth day is labelled (the last one always), so 30 labels do not overlap.
  const labelled = new Set(days.filter((_, i) => i % 5 === 0 || i === days.length - 1).map((d) => d.date));
  const titleId = `${o.id}-title`;
  const descId = `${o.id}-desc`;
  return html`<svg class="chart" viewBox="${`0 0 ${WIDTH} ${HEIGHT}`}" width="100%" role="img" aria-labelledby="${`${titleId} ${descId}`}" focusable="false" font-family="system-ui, sans-serif" font-size="11">
<title id="${titleId}">${o.title}</title><desc id="${descId}">${o.description}</desc>
<g aria-hidden="true">
${yBar.ticks(4).map((v) => html`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${r(yBar(v))}" y2="${r(yBar(v))}" stroke="#d0d5dd" stroke-width="1"/><text x="${MARGIN.left - 6}" y="${r(yBar(v)) + 4}" text-anchor="end" fill="${INK}">${o.barTick(v)}</text>`)}
${yLine
  .ticks(4)
  .filter((v) => Number.isInteger(v))
  .map((v) => html`<text x="${WIDTH - MARGIN.right + 6}" y="${r(yLine(v)) + 4}" fill="${LINE}">${o.lineTick(v)}</text>`)}
${days.map((d) => {
  const top = yBar(d.bar);
  return html`<rect x="${r(x(d.date) ?? 0)}" y="${r(top)}" width="${r(x.bandwidth())}" height="${r(Math.max(0, base - top))}" fill="${BAR}"/>`;
})}
<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${base}" y2="${base}" stroke="${INK}" stroke-width="1"/>
${days.filter((d) => labelled.has(d.date)).map((d) => html`<text x="${r((x(d.date) ?? 0) + half)}" y="${base + 16}" text-anchor="middle" fill="${INK}">${d.date.slice(5)}</text>`)}
${path ? html`<path d="${path}" fill="none" stroke="${LINE}" stroke-width="2"/>` : null}
${days.map((d) => html`<circle cx="${r((x(d.date) ?? 0) + half)}" cy="${r(yLine(d.line))}" r="2.5" fill="${LINE}"/>`)}
<rect x="${MARGIN.left}" y="${HEIGHT - 18}" width="12" height="12" fill="${BAR}"/><text x="${MARGIN.left + 18}" y="${HEIGHT - 8}" fill="${INK}">${o.barLegend}</text>
<line x1="${MARGIN.left + 260}" x2="${MARGIN.left + 284}" y1="${HEIGHT - 12}" y2="${HEIGHT - 12}" stroke="${LINE}" stroke-width="2"/><text x="${MARGIN.left + 290}" y="${HEIGHT - 8}" fill="${INK}">${o.lineLegend}</text>
</g>
</svg>`;
}
