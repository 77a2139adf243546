import { scaleBand, scaleLinear } from "d3-scale";
import { line } from "d3-shape";
import { html, type SafeHtml } from "../../shared/html.js";

/** One day of a chart: the day (YYYY-MM-DD), its label as the page writes it (`7 Ara`), the bar's value and the line's. */
export interface ChartDay {
  date: string;
  label: string;
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

// A phone's width in user units: the svg scales with its box (viewBox, width 100%), so at 390 px
// its 13-unit text is about 11 px, and no larger than 15 px in a desktop's half-width card.
const WIDTH = 440;
const HEIGHT = 300;
const FONT = 13;
const MARGIN = { top: 16, right: 36, bottom: 84, left: 56 };
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
  // Every seventh day from the last one back is labelled, so 30 labels do not overlap at this width.
  const labelled = new Set(days.filter((_, i) => (days.length - 1 - i) % 7 === 0).map((d) => d.date));
  const titleId = `${o.id}-title`;
  const descId = `${o.id}-desc`;
  return html`<svg class="chart" viewBox="${`0 0 ${WIDTH} ${HEIGHT}`}" width="100%" role="img" aria-labelledby="${`${titleId} ${descId}`}" focusable="false" font-family="system-ui, sans-serif" font-size="${FONT}">
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
${days.filter((d) => labelled.has(d.date)).map((d) => html`<text x="${r((x(d.date) ?? 0) + half)}" y="${base + 18}" text-anchor="middle" fill="${INK}">${d.label}</text>`)}
${path ? html`<path d="${path}" fill="none" stroke="${LINE}" stroke-width="2"/>` : null}
${days.map((d) => html`<circle cx="${r((x(d.date) ?? 0) + half)}" cy="${r(yLine(d.line))}" r="2.5" fill="${LINE}"/>`)}
<rect x="8" y="${HEIGHT - 46}" width="12" height="12" fill="${BAR}"/><text x="26" y="${HEIGHT - 35}" fill="${INK}">${o.barLegend}</text>
<line x1="8" x2="20" y1="${HEIGHT - 16}" y2="${HEIGHT - 16}" stroke="${LINE}" stroke-width="2"/><text x="26" y="${HEIGHT - 11}" fill="${INK}">${o.lineLegend}</text>
</g>
</svg>`;
}
