// The board in a real browser (issue 25; run by .ci/run after cargo test):
// Debian's chromium driven by playwright-core, both offline. Seeds a plan
// with the CLI, serves it with `cairn serve --http`, signs in with a read
// token and checks what a person sees; renders `cairn graph` Mermaid output
// to SVG with the npm mermaid package in the same browser; measures page
// weight and time to first render for a 1,000-task plan. Screenshots go to
// target/board-shots/. Exits non-zero on the first failed check.
//
// usage: node tests/board/board.mjs CAIRN_BIN NODE_MODULES_DIR OUT_DIR
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

const [bin, modules, outDir] = process.argv.slice(2).map((p) => resolve(p));
const require = createRequire(join(modules, 'noop.js'));
const { chromium } = require('playwright-core');
mkdirSync(outDir, { recursive: true });

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

const NOW = String(Math.floor(Date.now() / 1000));
function cairn(dir, ...args) {
  return execFileSync(bin, args, { cwd: dir, encoding: 'utf8', env: { ...process.env, CAIRN_DB: '' } }).trim();
}
function project() {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-board-'));
  mkdirSync(join(dir, '.git'));
  return dir;
}
function slugOf(line) { return line.replace(/^(Created|Forked) /, '').split(' ')[0].replace(/\.$/, ''); }

async function serve(dir, extra = []) {
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', ...extra], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const rl = createInterface({ input: child.stderr });
  const url = await new Promise((ok, fail) => {
    rl.on('line', (l) => { const m = l.match(/(http:\/\/[^ ]+)\/mcp/); if (m) ok(m[1]); });
    child.on('exit', () => fail(new Error('server exited')));
  });
  return { child, url };
}

// ---- the seeded plan
const dir = project();
const plan = slugOf(cairn(dir, 'add', 'ship the board', '-d', 'A plan to see.'));
const design = slugOf(cairn(dir, 'add', 'design the views', '--under', plan));
const build = slugOf(cairn(dir, 'add', 'build the page', '--under', plan));
const review = slugOf(cairn(dir, 'add', 'review it', '--under', plan));
const hostileName = slugOf(cairn(dir, 'add', 'Say "hi" <b>bold</b> [x]', '--under', plan));
cairn(dir, 'dep', 'add', build, '--on', design);
cairn(dir, 'dep', 'add', review, '--on', build);
cairn(dir, 'note', design, 'Layers left to right; phases nested.');
cairn(dir, 'edit', design, '--set', 'priority=high', '--set', 'owner=team-ui');
cairn(dir, 'done', design);
cairn(dir, 'block', review);
cairn(dir, 'claim', build);
const HOSTILE = '<script>window.__pwned=1;alert(1)</script><img src=x onerror="window.__pwned=2;alert(2)">';
cairn(dir, 'note', build, HOSTILE);
const token = cairn(dir, 'token', 'create', 'viewer', '--grant', 'read');
// Set above: design completed, review blocked, build active (claimed); the
// plan and the other phases are as `cairn add` made them (active).
const expected = { [plan]: 'active', [design]: 'completed', [build]: 'active', [review]: 'blocked', [hostileName]: 'active' };
for (const t of JSON.parse(cairn(dir, 'query', '--format', 'json', '(all)'))) {
  check(expected[t.slug] === t.status, `seeded: ${t.slug} is ${t.status} in the store`);
}

const server = await serve(dir);
const userData = mkdtempSync(join(tmpdir(), 'cairn-chromium-'));
const context = await chromium.launchPersistentContext(userData, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let dialogs = 0;
const offsite = [];
context.on('request', (r) => { const u = r.url(); if (!u.startsWith(server.url) && !u.startsWith('data:') && !u.startsWith('about:') && !u.startsWith('file:')) offsite.push(u); });
const page = context.pages()[0] || await context.newPage();
page.on('dialog', async (d) => { dialogs++; await d.dismiss(); });
const shot = async (name) => { await page.screenshot({ path: join(outDir, name + '.png'), fullPage: false }); };

try {
  // Wrong token: refused, no cookie.
  await page.goto(server.url + '/');
  await page.fill('#token', 'cairn_' + '0'.repeat(64));
  const [bad] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  check(bad.status() === 401, `a wrong token is refused (HTTP ${bad.status()})`);
  check((await page.textContent('#message')).includes('The bearer token is not valid (unknown or revoked).'), 'the sign-in page says why');
  check((await context.cookies()).length === 0, 'no cookie for a wrong token');
  await shot('signin-refused');

  // Sign in.
  await page.fill('#token', token);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  check(page.url() === server.url + '/', `signed in, the URL holds no token (${page.url()})`);
  const cookies = await context.cookies();
  check(cookies.length === 1 && cookies[0].httpOnly && cookies[0].sameSite === 'Strict' && !cookies[0].value.includes(token),
    'one HttpOnly SameSite=Strict cookie without the token');
  check(await page.evaluate(() => document.cookie) === '', 'the page script cannot read the cookie');

  // The graph: every seeded task with its status.
  await page.waitForSelector(`.card[data-slug="${review}"]`, { timeout: 10000 });
  for (const [slug, status] of Object.entries(expected)) {
    const got = await page.getAttribute(`#graph .card[data-slug="${slug}"]`, 'data-status');
    check(got === status, `graph: ${slug} is ${status} (${got})`);
  }
  const ready = await page.$$eval('#graph .card.ready', (els) => els.map((e) => e.dataset.slug));
  check(ready.includes(hostileName) && !ready.includes(build), `graph: the ready frontier is marked (${ready.join(', ')})`);
  check((await page.textContent(`.card[data-slug="${build}"] .claim`)).includes('held by'), 'graph: the claim holder shows');
  check((await page.textContent(`.card[data-slug="${hostileName}"] .name`)) === 'Say "hi" <b>bold</b> [x]', 'graph: a hostile name is text');
  check((await page.$$('#graph svg.arrows path[marker-end]')).length === 2, 'graph: two depends-on arrows');
  await shot('graph');

  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('graph-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // Keyboard: Tab from the top reaches the views' links; a card is a link
  // that Enter opens.
  await page.focus('#plan');
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.className);
  check(/card|toggle/.test(focused), `keyboard: Tab goes from the plan menu into the graph (${focused})`);
  await page.focus(`.card[data-slug="${design}"]`);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.obs-text');
  check(page.url().endsWith('#/task/' + design), 'keyboard: Enter on a card opens its page');
  await page.goBack();
  await page.waitForSelector(`.card[data-slug="${review}"]`);

  // Board and ready.
  await page.goto(server.url + '/#/board');
  await page.waitForSelector('.column');
  const cols = await page.$$eval('.column h2', (hs) => hs.map((h) => h.textContent));
  check(cols.join('|').includes('completed 1') && cols.join('|').includes('blocked 1'), `board: columns by status (${cols.join(', ')})`);
  await shot('board');
  await page.goto(server.url + '/#/ready');
  await page.waitForSelector('table, main p');
  await shot('ready');

  // The task page: an observation, and a hostile one shown as text.
  await page.goto(server.url + '/#/task/' + design);
  await page.waitForSelector('.obs-text');
  check((await page.textContent('.obs-text')) === 'Layers left to right; phases nested.', 'task page: the observation shows');
  // Metadata as a definition list, one dt/dd per key (a nested-array bug
  // printed "[object HTMLElement]" here).
  const meta = await page.$$eval('#view dl > *', (es) => es.map((e) => e.tagName + ':' + e.textContent));
  check(meta.join('|') === 'DT:owner|DD:team-ui|DT:priority|DD:high' || meta.join('|') === 'DT:priority|DD:high|DT:owner|DD:team-ui',
    `task page: metadata as dt/dd (${meta.join('|')})`);
  await shot('task');
  await page.goto(server.url + '/#/task/' + build);
  await page.waitForSelector('.obs-text');
  const texts = await page.$$eval('.obs-text', (els) => els.map((e) => e.textContent));
  check(texts.includes(HOSTILE), 'task page: <script>/<img onerror> shown as text');
  check(await page.$('#view img') === null && await page.$('#view script') === null, 'task page: no img or script element from agent text');
  check(await page.evaluate(() => window.__pwned) === undefined && dialogs === 0, 'no script ran, no dialog opened');
  await shot('task-hostile');

  // Search and TQ.
  await page.goto(server.url + '/#/search/layers');
  await page.waitForSelector('#results table');
  check((await page.textContent('#results')).includes(design), 'search finds the observation');
  await shot('search');
  await page.goto(server.url + '/#/query');
  await page.fill('#tq', '(-> (all) (:where (= :status "blocked")))');
  await page.click('form.bar button');
  await page.waitForSelector('#results table');
  check((await page.textContent('#results')).includes(review), 'TQ box: a read query as a table');
  await page.fill('#tq', '(-> (all) (:set-status! "abandoned"))');
  await page.click('form.bar button');
  await page.waitForSelector('#results .error');
  check(JSON.parse(cairn(dir, 'query', '--format', 'json', '(-> (all) (:where (= :status "abandoned")) (:count))')) === 0, 'TQ box: a mutation is refused, nothing written');
  await shot('query');

  // Live: a task added by the CLI appears without a reload within 2 s.
  await page.goto(server.url + '/#/graph/' + plan);
  await page.waitForSelector(`.card[data-slug="${review}"]`);
  await page.waitForFunction(() => document.getElementById('live').classList.contains('on'));
  const marker = await page.evaluate(() => { window.__same = 1; return 1; });
  const t0 = Date.now();
  const added = slugOf(cairn(dir, 'add', 'a task from the CLI', '--under', plan));
  let appeared = true;
  try { await page.waitForSelector(`.card[data-slug="${added}"]`, { timeout: 2000 }); } catch { appeared = false; }
  const took = Date.now() - t0;
  check(appeared && await page.evaluate(() => window.__same) === marker, `live: a CLI write shows without a reload (${took} ms, bound 2000 ms)`);
  await shot('live');

  // A phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(server.url + '/#/board');
  await page.waitForSelector('.column');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
  check(overflow, 'phone: the board fits the width');
  await shot('phone-board');
  await page.setViewportSize({ width: 1280, height: 800 });

  // Revoked: the next request is refused and the page falls back to sign-in.
  cairn(dir, 'token', 'revoke', 'viewer');
  const after = await page.goto(server.url + '/');
  check((await page.$('#token')) !== null && after.status() === 200, 'revoked: back to the sign-in page');
  check(offsite.length === 0, `no request left the server (${offsite.join(' ')})`);

  // Mermaid: `cairn graph` rendered by the npm mermaid package, offline.
  const mermaidText = cairn(dir, 'graph', plan, '--format', 'mermaid');
  writeFileSync(join(outDir, 'graph.mmd'), mermaidText + '\n');
  const mpage = await context.newPage();
  await mpage.goto('about:blank');
  await mpage.addScriptTag({ path: join(modules, 'mermaid/dist/mermaid.min.js') });
  const svg = await mpage.evaluate(async (text) => {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
    const { svg } = await window.mermaid.render('g', text);
    return svg;
  }, mermaidText);
  // mermaid serializes its HTML labels as HTML (`<br>`): made XML so the
  // saved file opens as an image (hostile pass: the docs' copy did not).
  const svgXml = svg.replace(/<br>/g, '<br/>');
  const xmlOk = await mpage.evaluate((t) =>
    new DOMParser().parseFromString(t, 'image/svg+xml').getElementsByTagName('parsererror').length === 0, svgXml);
  check(xmlOk, 'mermaid: the saved SVG is well-formed XML');
  writeFileSync(join(outDir, 'graph-mermaid.svg'), svgXml);
  check(svg.startsWith('<svg') && svg.includes(design) && svg.includes('Say &quot;hi&quot;') === false && svg.includes('bold'),
    `mermaid renders the graph to SVG (${svg.length} bytes)`);
  check(!/<b>bold<\/b>/.test(svg), 'mermaid: the hostile name is not markup');
  await mpage.close();
} catch (e) {
  console.log('FAIL ' + (e && e.stack || e));
  failures++;
  await shot('failure').catch(() => {});
}
server.child.kill('SIGTERM');

// ---- a 1,000-task plan: page weight and time to first render.
try {
  const big = project();
  const root = slugOf(cairn(big, 'add', 'a big plan'));
  const mcp = spawn(bin, ['serve'], { cwd: big, stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: mcp.stdout });
  const waiting = new Map();
  lines.on('line', (l) => { try { const m = JSON.parse(l); if (waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); } } catch {} });
  let id = 0;
  const rpc = (method, params) => new Promise((ok) => { id++; waiting.set(id, ok); mcp.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n'); });
  await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'seed', version: '1' } });
  mcp.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const slugs = [];
  const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
  for (let p = 0; p < 10; p++) {
    const r = await rpc('tools/call', { name: 'task_fork', arguments: { name: `build the ${WORDS[p]} module`, from: root } });
    const phase = r.result.content[0].text.split(' ')[1];
    for (let i = 0; i < 99; i++) {
      const t = await rpc('tools/call', { name: 'task_fork', arguments: { name: `refine ${WORDS[p]} widget ${i}`, from: phase } });
      slugs.push(t.result.content[0].text.split(' ')[1]);
    }
  }
  mcp.stdin.end();
  await new Promise((ok) => mcp.on('exit', ok));
  const total = JSON.parse(cairn(big, 'query', '--format', 'json', '(-> (all) (:count))'));
  check(total === 1001, `the big plan holds ${total} tasks`);
  const bigServer = await serve(big, ['--no-auth']);
  const bpage = await context.newPage();
  let bytes = 0;
  const byPath = {};
  bpage.on('response', async (r) => {
    try {
      const n = (await r.body()).length;
      bytes += n;
      const path = new URL(r.url()).pathname;
      byPath[path] = (byPath[path] || 0) + n;
    } catch {}
  });
  const t0 = Date.now();
  await bpage.goto(bigServer.url + '/#/graph/' + root);
  await bpage.waitForSelector('#graph .card');
  const firstRender = Date.now() - t0;
  const cards = await bpage.$$eval('#graph .card', (c) => c.length);
  await bpage.waitForTimeout(300);
  await bpage.screenshot({ path: join(outDir, 'big-plan.png') });
  const t1 = Date.now();
  await bpage.click('button.toggle >> nth=1');
  await bpage.waitForFunction(() => document.querySelectorAll('#graph .card').length > 50);
  const expand = Date.now() - t1;
  await bpage.screenshot({ path: join(outDir, 'big-plan-expanded.png') });
  console.log(`1,000-task plan: page weight ${bytes} bytes (HTML, script, style and the first graph page), ` +
    `first render ${firstRender} ms (${cards} cards drawn, phases collapsed), expanding a 99-task phase ${expand} ms`);
  const parts = Object.entries(byPath).map(([p, n]) => `${p}=${n}`).join(' ');
  console.log(`  bytes by path: ${parts}`);
  writeFileSync(join(outDir, 'metrics.txt'), `page_weight_bytes=${bytes}\nfirst_render_ms=${firstRender}\ncards_first_render=${cards}\nexpand_phase_ms=${expand}\nbytes_by_path: ${parts}\n`);
  check(cards < 200, `the 1,000-task plan is not drawn at once (${cards} cards)`);
  bigServer.child.kill('SIGTERM');
  void slugs;
} catch (e) {
  console.log('FAIL ' + (e && e.stack || e));
  failures++;
}
await context.close();
console.log(failures ? `${failures} board check(s) failed` : 'board: all checks passed');
process.exit(failures ? 1 : 0);
