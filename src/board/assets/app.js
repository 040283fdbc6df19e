// cairn board (issue 25; docs/board.md). Read-only views over the board's
// JSON endpoints. Agent text is only ever put in the page with textContent
// (the el() helper below); nothing here parses agent text as HTML.
'use strict';

const view = document.getElementById('view');
const live = document.getElementById('live');

// el('a', {href: '#'}, 'text', child...): an element; strings become text nodes.
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(shown(String(k))));
  }
  return e;
}

// Invisible and direction-changing characters shown as \u{hex} (tq.md §10):
// a bidi override in a task name must not reverse the text around it.
function shown(text) {
  return text.replace(/[\u200B-\u200F\u202A-\u202E\u2060-\u2069\u2028\u2029\uFEFF]/g,
    (c) => '\\u{' + c.codePointAt(0).toString(16) + '}');
}

async function api(name, params) {
  const q = new URLSearchParams(params || {}).toString();
  const r = await fetch('/board/api/' + name + (q ? '?' + q : ''), {credentials: 'same-origin', cache: 'no-store'});
  if (r.status === 401 || r.status === 403) { location.reload(); throw new Error('signed out'); }
  const body = await r.json().catch(() => ({error: 'bad answer'}));
  if (!r.ok) throw new Error(body.error || ('HTTP ' + r.status));
  return body;
}

const STATUSES = ['open', 'active', 'blocked', 'completed', 'abandoned'];
const taskHref = (slug) => '#/task/' + encodeURIComponent(slug);

function timeLeft(until) {
  const s = Math.round(until - Date.now() / 1000);
  if (s <= 0) return 'lapsing';
  if (s < 120) return s + ' s left';
  if (s < 7200) return Math.round(s / 60) + ' min left';
  return Math.round(s / 3600) + ' h left';
}

function when(ts) {
  return new Date(ts * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

function badge(status) { return el('span', {class: 'badge s-' + status, 'data-status': status}, status); }

// A task's name: the graph's `name`, else a display name that differs from the slug.
const nameOf = (t) => t.name || (t['display-name'] && t['display-name'] !== t.slug ? t['display-name'] : null);

function card(t) {
  const claimed = t['claimed-by'];
  const name = nameOf(t);
  return el('a', {class: 'card s-' + t.status + (t.ready ? ' ready' : ''), href: taskHref(t.slug),
                  'data-slug': t.slug, 'data-status': t.status},
    el('span', {class: 'slug'}, t.slug),
    name ? el('span', {class: 'name'}, name) : null,
    el('span', {class: 'meta'}, badge(t.status), t.ready ? el('span', {class: 'ready-mark'}, 'ready') : null),
    claimed ? el('span', {class: 'claim'}, 'held by ', claimed,
      t['claim-until'] ? ' · ' + timeLeft(t['claim-until']) : '') : null);
}

// ---- graph: plans as boxes, phases nested (collapsed past a size), tasks
// in layers by depends-on depth, arrows drawn in an SVG over the page.
const expanded = new Set();
const COLLAPSE_OVER = 12;

function layers(ids, deps) {
  const depth = new Map();
  const visiting = new Set();
  const d = (id) => {
    if (depth.has(id)) return depth.get(id);
    if (visiting.has(id)) return 0;
    visiting.add(id);
    let best = 0;
    for (const to of deps.get(id) || []) if (ids.has(to)) best = Math.max(best, d(to) + 1);
    visiting.delete(id);
    depth.set(id, best);
    return best;
  };
  for (const id of ids) d(id);
  return depth;
}

function renderGroup(t, kids, deps, all) {
  const children = kids.get(t.slug) || [];
  const box = el('section', {class: 'group', 'aria-label': t.name || t.slug});
  const open = children.length <= COLLAPSE_OVER || expanded.has(t.slug);
  const head = el('div', {class: 'group-head'}, card(t));
  if (children.length) {
    head.append(el('button', {type: 'button', class: 'toggle', 'aria-expanded': String(open),
      onclick: () => { if (open) expanded.delete(t.slug); else expanded.add(t.slug); route(); }},
      (open ? '▾ ' : '▸ ') + children.length + (children.length === 1 ? ' phase' : ' phases')));
  }
  box.append(head);
  if (!children.length || !open) return box;
  const ids = new Set(children.map((c) => c.slug));
  const depth = layers(ids, deps);
  const cols = [];
  for (const c of children) {
    const k = depth.get(c.slug) || 0;
    (cols[k] = cols[k] || []).push(c);
  }
  const row = el('div', {class: 'layers'});
  for (const col of cols) {
    if (!col) continue;
    row.append(el('div', {class: 'layer'}, col.map((c) =>
      (kids.get(c.slug) || []).length ? renderGroup(c, kids, deps, all) : card(c))));
  }
  box.append(row);
  return box;
}

function drawArrows(host, edges) {
  const old = host.querySelector('svg.arrows');
  if (old) old.remove();
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'arrows');
  svg.setAttribute('aria-hidden', 'true');
  const base = host.getBoundingClientRect();
  svg.setAttribute('width', host.scrollWidth);
  svg.setAttribute('height', host.scrollHeight);
  const defs = document.createElementNS(svg.namespaceURI, 'defs');
  const marker = document.createElementNS(svg.namespaceURI, 'marker');
  marker.setAttribute('id', 'head'); marker.setAttribute('viewBox', '0 0 10 10');
  marker.setAttribute('refX', '10'); marker.setAttribute('refY', '5');
  marker.setAttribute('markerWidth', '7'); marker.setAttribute('markerHeight', '7');
  marker.setAttribute('orient', 'auto-start-reverse');
  const tip = document.createElementNS(svg.namespaceURI, 'path');
  tip.setAttribute('d', 'M0,0 L10,5 L0,10 z');
  marker.append(tip); defs.append(marker); svg.append(defs);
  const at = (slug) => host.querySelector('.card[data-slug="' + CSS.escape(slug) + '"]');
  for (const e of edges) {
    const a = at(e.from), b = at(e.to);
    if (!a || !b) continue;
    const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
    // The dependency (to) comes first: draw it -> dependent (from), leaving
    // from the side that faces the dependent.
    const forward = ra.left >= rb.right - 1;
    const dx = host.scrollLeft - base.left, dy = host.scrollTop - base.top;
    const x1 = (forward ? rb.right : rb.left) + dx, y1 = rb.top + rb.height / 2 + dy;
    const x2 = (forward ? ra.left : ra.right) + dx, y2 = ra.top + ra.height / 2 + dy;
    const p = document.createElementNS(svg.namespaceURI, 'path');
    const s = forward ? 1 : -1;
    if (Math.abs(y2 - y1) < 8) {
      // Same row: arc over the cards in between (a straight line ran
      // behind them and read as an edge into the wrong card), above the
      // row for a forward edge, below it for a backward one.
      const lift = Math.max(rb.height, ra.height) / 2 + 14 + Math.min(60, Math.abs(x2 - x1) / 10);
      const cy = forward ? Math.min(y1, y2) - lift * 1.4 : Math.max(y1, y2) + lift * 1.4;
      p.setAttribute('d', `M${x1},${y1} C${x1 + s * 40},${cy} ${x2 - s * 40},${cy} ${x2},${y2}`);
    } else {
      const mid = (x1 + x2) / 2;
      p.setAttribute('d', `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`);
    }
    p.setAttribute('marker-end', 'url(#head)');
    svg.append(p);
  }
  host.prepend(svg);
}

// The graph page last shown, so a live refresh or a toggle keeps it.
let graphAt = {plan: '', offset: 0};

async function graphView(plan, offset) {
  const params = {offset: offset || 0};
  if (plan) params.plan = plan;
  const [data, plans] = await Promise.all([api('graph', params), api('plans')]);
  const g = data.graph;
  graphAt = {plan: plan || '', offset: data.offset};
  const select = el('select', {id: 'plan', 'aria-label': 'Plan',
    onchange: (ev) => { location.hash = ev.target.value ? '#/graph/' + encodeURIComponent(ev.target.value) : '#/graph'; }},
    el('option', {value: ''}, 'Every live plan'),
    plans.plans.map((p) => el('option', {value: p.slug, selected: p.slug === plan}, p['display-name'] || p.slug)));
  const bySlug = new Map(g.tasks.map((t) => [t.slug, t]));
  const kids = new Map();
  const roots = [];
  for (const t of g.tasks) {
    if (t.parent && bySlug.has(t.parent) && t.parent !== t.slug) {
      if (!kids.has(t.parent)) kids.set(t.parent, []);
      kids.get(t.parent).push(t);
    } else roots.push(t);
  }
  const deps = new Map();
  for (const e of g.edges) { if (!deps.has(e.from)) deps.set(e.from, []); deps.get(e.from).push(e.to); }
  const canvas = el('div', {class: 'canvas', id: 'graph'});
  for (const r of roots) canvas.append(renderGroup(r, kids, deps, bySlug));
  const pager = el('p', {class: 'pager'}, `${g.tasks.length ? data.offset + 1 : 0}–${data.offset + g.tasks.length} of ${data.total} tasks `,
    data.offset > 0 ? el('button', {type: 'button', onclick: () => graphView(plan, Math.max(0, data.offset - data.page))}, 'Previous') : null,
    data.offset + g.tasks.length < data.total ? el('button', {type: 'button', onclick: () => graphView(plan, data.offset + data.page)}, 'Next') : null);
  const legend = el('p', {class: 'legend'}, STATUSES.map((s) => badge(s)), el('span', {class: 'ready-mark'}, 'ready'),
    ' An arrow points from a task to what waits on it.');
  show(el('h1', {}, 'Graph'), el('div', {class: 'bar'}, select), legend, pager, canvas);
  requestAnimationFrame(() => drawArrows(canvas, g.edges));
  window.onresize = () => drawArrows(canvas, g.edges);
}

async function boardView() {
  const data = await api('columns');
  show(el('h1', {}, 'Board'), el('div', {class: 'columns'}, data.columns.map((c) =>
    el('section', {class: 'column', 'aria-label': c.status},
      el('h2', {}, badge(c.status), ' ', String(c.count)),
      c.tasks.map((t) => card(t)),
      c.count > c.tasks.length ? el('p', {class: 'more'}, (c.count - c.tasks.length) + ' more') : null))));
}

function taskTable(tasks) {
  if (!tasks.length) return el('p', {}, 'No tasks.');
  return el('table', {}, el('thead', {}, el('tr', {}, ['slug', 'status', 'name', 'claimed by', 'updated'].map((h) => el('th', {}, h)))),
    el('tbody', {}, tasks.map((t) => el('tr', {'data-slug': t.slug},
      el('td', {}, el('a', {href: taskHref(t.slug)}, t.slug)), el('td', {}, badge(t.status)),
      el('td', {}, t['display-name'] && t['display-name'] !== t.slug ? t['display-name'] : ''),
      el('td', {}, t['claimed-by'] || ''), el('td', {}, t['updated-ts'] ? when(t['updated-ts']) : '')))));
}

async function readyView() {
  const data = await api('ready');
  show(el('h1', {}, 'Ready'), el('p', {}, 'Tasks to start now: not done, not blocked, dependencies and phases done, unclaimed.'), taskTable(data.tasks));
}

async function taskView(slug) {
  const data = await api('task', {slug});
  const t = data.task.task;
  const obs = (data.observations.events || []);
  const sections = [
    el('h1', {}, t.name || t.slug),
    el('p', {class: 'meta'}, el('span', {class: 'slug'}, t.slug), ' ', badge(t.status),
      t.claim ? el('span', {class: 'claim'}, ' held by ', t.claim.owner, ' · ', timeLeft(t.claim.until)) : null),
    t.description ? el('p', {class: 'description'}, t.description) : null,
    t.parent ? el('p', {}, 'Phase of ', el('a', {href: taskHref(t.parent)}, t.parent)) : null,
    el('h2', {}, 'Metadata'),
    Object.keys(t.metadata || {}).length ? el('dl', {}, Object.entries(t.metadata).map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])) : el('p', {}, 'None.'),
    el('h2', {}, 'Edges'),
    (t.edges || []).length || (t.children || []).length ? el('ul', {},
      (t.edges || []).map((e) => el('li', {}, e.edge_type || e['edge-type'] || e.type || 'edge', ' ', el('a', {href: taskHref(e.target)}, e.target))),
      (t.children || []).map((c) => el('li', {}, 'phase ', el('a', {href: taskHref(c.slug)}, c.slug), ' ', badge(c.status)))) : el('p', {}, 'None.'),
    el('h2', {}, 'Observations'),
    obs.length ? el('ol', {class: 'observations'}, obs.map((e) => el('li', {}, el('time', {}, when(e.ts)), ' ', el('span', {class: 'obs-text'}, e.text)))) : el('p', {}, 'None.'),
    el('h2', {}, 'Handoffs'),
    (data.task.handoffs || []).length ? el('ul', {}, data.task.handoffs.map((h) => el('li', {}, when(h.ts), ' ', h.summary, ' (', el('code', {}, h.path), ')'))) : el('p', {}, 'None.'),
    el('h2', {}, 'Timeline'),
    el('ol', {class: 'timeline'}, (data.timeline.events || []).map((e) => el('li', {}, el('time', {}, when(e.ts)), ' ', el('code', {}, e.type), ' ', e.text))),
  ];
  show(...sections);
}

function searchView(q) {
  const input = el('input', {type: 'search', id: 'q', value: q || '', 'aria-label': 'Search observations', placeholder: 'words in observations'});
  const out = el('div', {id: 'results'});
  const run = async () => {
    const value = input.value.trim();
    if (!value) return;
    try {
      const data = await api('search', {q: value});
      out.replaceChildren(data.hits.length ? el('table', {}, el('tbody', {}, data.hits.map((h) =>
        el('tr', {}, el('td', {}, el('a', {href: taskHref(h.task)}, h.task)), el('td', {}, h.date), el('td', {}, h.snippet))))) : el('p', {}, 'No matching observations.'));
    } catch (e) { out.replaceChildren(el('p', {class: 'error'}, e.message)); }
  };
  show(el('h1', {}, 'Search'), el('form', {class: 'bar', onsubmit: (ev) => { ev.preventDefault(); run(); }}, input, el('button', {type: 'submit'}, 'Search')), out);
  if (q) run();
}

function queryView() {
  const box = el('textarea', {id: 'tq', rows: 3, 'aria-label': 'TQ query', spellcheck: 'false'}, sessionStorage.getItem('tq') || '(-> (active) (:sort :updated-ts :desc) (:take 20))');
  const out = el('div', {id: 'results'});
  const run = async () => {
    sessionStorage.setItem('tq', box.value);
    try {
      const data = await api('query', {q: box.value});
      const r = data.result;
      if (Array.isArray(r) && r.every((x) => x && typeof x === 'object' && 'slug' in x && 'status' in x)) out.replaceChildren(taskTable(r));
      else if (Array.isArray(r) && r.length && typeof r[0] === 'object') {
        const keys = Object.keys(r[0]);
        out.replaceChildren(el('table', {}, el('thead', {}, el('tr', {}, keys.map((k) => el('th', {}, k)))),
          el('tbody', {}, r.map((row) => el('tr', {}, keys.map((k) => el('td', {}, typeof row[k] === 'object' ? JSON.stringify(row[k]) : String(row[k] ?? ''))))))));
      } else out.replaceChildren(el('pre', {}, JSON.stringify(r, null, 2)));
    } catch (e) { out.replaceChildren(el('pre', {class: 'error'}, e.message)); }
  };
  show(el('h1', {}, 'TQ (read only)'), el('form', {class: 'bar', onsubmit: (ev) => { ev.preventDefault(); run(); }}, box, el('button', {type: 'submit'}, 'Run')), out);
}

function show(...nodes) {
  view.replaceChildren(...nodes.filter(Boolean));
  view.setAttribute('data-rendered', String(Date.now()));
}

let current = '';
async function route() {
  const hash = location.hash || '#/graph';
  const [, name, arg] = hash.match(/^#\/([a-z]+)\/?(.*)$/) || [null, 'graph', ''];
  let decoded = '';
  try { decoded = arg ? decodeURIComponent(arg) : ''; } catch (e) { decoded = arg; }
  for (const a of document.querySelectorAll('nav a')) a.toggleAttribute('aria-current', a.id === 'nav-' + name);
  try {
    if (name === 'board') await boardView();
    else if (name === 'ready') await readyView();
    else if (name === 'task') await taskView(decoded);
    else if (name === 'search') { if (current !== hash) searchView(decoded); }
    else if (name === 'query') { if (current !== hash) queryView(); }
    else await graphView(decoded, graphAt.plan === decoded ? graphAt.offset : 0);
  } catch (e) {
    show(el('h1', {}, 'Could not load'), el('p', {class: 'error'}, e.message));
  }
  if (current !== hash) view.focus({preventScroll: true});
  current = hash;
}

window.addEventListener('hashchange', route);
route();

// Live: the server says `change` when any process commits; re-read the view.
let pending = null;
const events = new EventSource('/board/events');
events.addEventListener('hello', () => { live.textContent = 'live'; live.classList.add('on'); });
events.addEventListener('change', () => {
  clearTimeout(pending);
  pending = setTimeout(() => { const h = location.hash; if (!/^#\/(search|query)/.test(h)) route(); }, 100);
});
events.addEventListener('closing', () => { live.textContent = 'server restarting…'; live.classList.remove('on'); });
events.onerror = () => { live.textContent = 'reconnecting…'; live.classList.remove('on'); };
