// Charts drawn in the browser with uPlot (vendored in /vendor). Colours come
// from the page's CSS variables, so the charts follow the light/dark theme;
// each chart also carries a text summary for screen readers.

import uPlot from '../vendor/uplot.mjs';
import { html, useEffect, useRef, useState } from './ui.js';

const palette = ['--chart-1', '--chart-2', '--chart-3', '--chart-4'];

function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888'; }

// dayStamps turns "2026-11-23" strings into the unix seconds uPlot wants.
export function dayStamps(dates) { return dates.map((d) => Date.parse(d + 'T00:00:00Z') / 1000); }

// useScheme re-renders when the system switches between light and dark, so
// the canvas is redrawn with the other theme's colours.
function useScheme() {
  const mq = matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(mq.matches);
  useEffect(() => {
    const on = (e) => setDark(e.matches);
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return dark;
}

// LineChart: x is unix seconds, series is [{label, values, fmt?}]; bars draws bars.
export function LineChart({ id, title, x, series, height = 200, bars }) {
  const box = useRef(null);
  const dark = useScheme();
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const width = Math.max(260, el.clientWidth || 600);
    const opts = {
      width, height, legend: { show: true },
      axes: [{ stroke: cssVar('--muted'), grid: { stroke: cssVar('--line') } },
        { stroke: cssVar('--muted'), grid: { stroke: cssVar('--line') }, size: 60 }],
      scales: { x: { time: true } },
      series: [{}, ...series.map((s, i) => ({
        label: s.label, stroke: cssVar(palette[i % palette.length]), width: 2,
        fill: bars ? cssVar(palette[i % palette.length]) + '66' : undefined,
        paths: bars ? uPlot.paths.bars({ size: [0.6, 40] }) : undefined,
        value: (u, v) => (v == null ? '—' : s.fmt ? s.fmt(v) : v),
      }))],
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)], el);
    // Resize in the next frame and only when the width changed: resizing
    // inside the observer's callback looped ("ResizeObserver loop completed
    // with undelivered notifications" in the console).
    let last = width;
    let frame = 0;
    const ro = new ResizeObserver(() => {
      const w = Math.max(260, el.clientWidth);
      if (w === last) return;
      last = w;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => plot.setSize({ width: w, height }));
    });
    ro.observe(el);
    return () => { cancelAnimationFrame(frame); ro.disconnect(); plot.destroy(); };
  }, [dark, JSON.stringify([x, series.map((s) => s.values)])]);
  const summary = series.map((s) => s.label + ': total ' + fmtSum(s)).join('; ');
  return html`<figure class="chart card" id=${id}><figcaption><h2>${title}</h2><span class="visually-hidden">${summary}</span></figcaption>
    <div class="chart-box" ref=${box} aria-hidden="true"></div></figure>`;
}

function fmtSum(s) {
  const t = s.values.reduce((a, b) => a + (b || 0), 0);
  return s.fmt ? s.fmt(t) : String(t);
}
