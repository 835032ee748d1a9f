// The task graph as SVG: layers by dependency depth (left to right), each layer ordered by
// the mean position of its dependencies, edges from a dependency to its dependent. An edge
// between neighbouring layers curves through the gap between them; a longer one runs in
// the gaps only (out to the next column gap, along the row gap nearest its ends, down the
// column gap before its target), so no edge passes under a node. Every label is cut to
// its node's width, measured in the page's font.

import { s } from './dom.js';

const W = 200, H = 46, GAP_X = 60, GAP_Y = 14, PAD = 10;
/// Room for a label inside its node (8 px on each side).
const LABEL_WIDTH = W - 16;
const FONT = 'system-ui, -apple-system, "Segoe UI", sans-serif';

/// Layout: task_id -> {x, y}.
export function layout(tasks) {
  const byId = new Map(tasks.map((t) => [t.task.task_id, t]));
  const depth = new Map();
  const visiting = new Set();
  const depthOf = (id) => {
    if (depth.has(id)) return depth.get(id);
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const t = byId.get(id);
    let d = 0;
    for (const dep of (t ? t.task.depends_on : [])) if (byId.has(dep)) d = Math.max(d, depthOf(dep) + 1);
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  const layers = [];
  for (const t of tasks) {
    const d = depthOf(t.task.task_id);
    (layers[d] ||= []).push(t.task.task_id);
  }
  const row = new Map();
  layers.forEach((ids, d) => {
    if (d > 0) {
      const key = (id) => {
        const deps = byId.get(id).task.depends_on.filter((x) => row.has(x));
        return deps.length ? deps.reduce((a, x) => a + row.get(x), 0) / deps.length : 0;
      };
      ids.sort((a, b) => key(a) - key(b));
    }
    ids.forEach((id, i) => row.set(id, i));
  });
  const pos = new Map();
  layers.forEach((ids, d) => ids.forEach((id, i) => pos.set(id, { x: PAD + d * (W + GAP_X), y: PAD + i * (H + GAP_Y) })));
  const width = PAD * 2 + Math.max(1, layers.length) * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + Math.max(1, ...layers.map((l) => l.length)) * (H + GAP_Y) - GAP_Y;
  return { pos, depth, width, height, rows: Math.max(1, ...layers.map((l) => l.length)) };
}

/// The SVG path of the edge from `from` (a node's top-left) to `to`, `span` layers apart.
export function edgePath(from, to, span, rows) {
  const x1 = from.x + W, y1 = from.y + H / 2, x2 = to.x, y2 = to.y + H / 2;
  if (span <= 1) {
    const mx = (x1 + x2) / 2;
    return `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
  }
  // The row gaps (above row 0, between rows, below the last) hold no node in any layer.
  const gapY = (i) => PAD + i * (H + GAP_Y) - GAP_Y / 2;
  const mid = (y1 + y2) / 2;
  let best = 0;
  for (let i = 1; i <= rows; i++) if (Math.abs(gapY(i) - mid) < Math.abs(gapY(best) - mid)) best = i;
  const cy = gapY(best), gx1 = x1 + GAP_X / 2, gx2 = x2 - GAP_X / 2;
  return `M${x1},${y1} H${gx1} V${cy} H${gx2} V${y2} H${x2}`;
}

/// Draw the graph; `onPick(task_id)` on a click. Nodes carry data-task for live updates.
export function draw(tasks, onPick) {
  const { pos, depth, width, height, rows } = layout(tasks);
  const svg = s('svg', { class: 'graph', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  const edges = s('g', { class: 'edges' });
  const nodes = s('g', { class: 'nodes' });
  for (const t of tasks) {
    const to = pos.get(t.task.task_id);
    for (const dep of t.task.depends_on) {
      const from = pos.get(dep);
      if (!from) continue;
      const span = depth.get(t.task.task_id) - depth.get(dep);
      edges.append(s('path', { d: edgePath(from, to, span, rows), 'data-from': dep, 'data-to': t.task.task_id }));
    }
  }
  for (const t of tasks) nodes.append(node(t, pos.get(t.task.task_id), onPick));
  svg.append(edges, nodes);
  return svg;
}

function node(t, p, onPick) {
  const g = s('g', { class: `node st-${t.task.status}`, transform: `translate(${p.x},${p.y})`, 'data-task': t.task.task_id, tabindex: 0 });
  g.addEventListener('click', () => onPick(t.task.task_id));
  g.append(
    s('rect', { width: W, height: H, rx: 6 }),
    s('text', { x: 8, y: 18, class: 'title' }, fitWidth(`${t.task.task_id} · ${t.task.title}`, 12)),
    s('text', { x: 8, y: 36, class: 'sub' }, sub(t)),
    s('title', {}, `${t.task.task_id}: ${t.task.title}\n${t.task.status}`),
  );
  return g;
}

export function sub(t) {
  const who = t.worker || t.task.assign_to || '—';
  const attempt = t.task.attempt ? ` · #${t.task.attempt}` : '';
  return fitWidth(`${t.task.status} · ${who}${attempt}`, 11);
}

let measurer = null;

/// `text` cut (with "…") to fit a node's label width at `px` pixels of the page's font.
/// Measured on a canvas, so it works while the view is hidden too.
function fitWidth(text, px) {
  measurer ||= document.createElement('canvas').getContext('2d');
  measurer.font = `${px}px ${FONT}`;
  if (measurer.measureText(text).width <= LABEL_WIDTH) return text;
  let n = text.length;
  while (n > 1 && measurer.measureText(text.slice(0, n - 1) + '…').width > LABEL_WIDTH) n -= 1;
  return text.slice(0, n - 1) + '…';
}
