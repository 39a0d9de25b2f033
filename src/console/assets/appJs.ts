/**
 * The console's script, without a framework: hash routes (`#/?filters`, `#/task/<id>`), the JSON API beside it, live
 * updates over server-sent events; this part holds the helpers, the list and the routes (the task page, its answer
 * form and result view are in files of their own, joined in consoleAssets.ts). Every value from a task is written
 * with textContent, never parsed as HTML. (No template literals inside: the script itself sits in one.)
 */
import { TASK_GENERATIONS } from '../../protocol/index.js';

export const APP_JS: string = `
const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const GENERATIONS = ${JSON.stringify(TASK_GENERATIONS)};
const main = document.getElementById('main');
const live = document.getElementById('live');
let role = 'readonly';
let stream;
let listState;
// Tasks ticked for a bulk cancel: kept across the live list's redraws.
const selected = new Set();

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children || []) if (child) node.append(child);
  return node;
}

function fmtTime(ms) {
  if (ms === null || ms === undefined) return '';
  const d = new Date(ms);
  return d.toISOString().replace('T', ' ').replace(/\\.\\d+Z$/, 'Z');
}

// Today's times as the clock shows them, older ones with their date; the full time is the element's title.
function fmtShortTime(ms) {
  const d = new Date(ms);
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay ? d.toLocaleTimeString([], { hour12: false }) : d.toISOString().slice(0, 10) + ' ' + d.toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' });
}

// Long ids and owners in a row: the head of it, the whole on hover.
function shortText(text, max) {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

function shortOwner(owner) {
  return shortText(owner.replace(/^principal:/, ''), 18);
}

function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

// A POST of an action: the page's own header (a foreign form cannot set it) and a JSON body.
function act(path, body) {
  const headers = { 'x-console-request': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return api(path, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

function api(path, init) {
  return fetch(path, Object.assign({ credentials: 'same-origin' }, init)).then((response) => {
    if (!response.ok) return response.json().catch(() => ({})).then((body) => {
      throw new Error(body.error || response.status + ' ' + response.statusText);
    });
    return response.json();
  });
}

function openStream(query, onData, event) {
  if (stream) stream.close();
  stream = new EventSource('api/stream?' + query);
  stream.addEventListener(event, (message) => {
    live.textContent = 'live · updated ' + new Date().toLocaleTimeString();
    onData(JSON.parse(message.data));
  });
  stream.addEventListener('problem', (message) => {
    live.textContent = 'live · ' + JSON.parse(message.data).error;
  });
  stream.onerror = () => { live.textContent = 'reconnecting…'; };
}

// ---- the list -------------------------------------------------------------------------------------------------

function filtersFromHash() {
  const hash = location.hash.replace(/^#\\/?/, '');
  return new URLSearchParams(hash.startsWith('?') ? hash.slice(1) : '');
}

function setFilters(params) {
  for (const [key, value] of [...params.entries()]) if (!value) params.delete(key);
  const text = params.toString();
  location.hash = '#/' + (text ? '?' + text : '');
}

function statusCell(status) {
  return el('span', { class: 'status ' + status, text: status.replace('_', ' ') });
}

function renderList() {
  const params = filtersFromHash();
  listState = { params, pages: 1, cursor: undefined };
  main.replaceChildren();
  const counts = el('div', { class: 'counts', role: 'group', 'aria-label': 'Tasks by status' });
  const chart = el('div', { id: 'chart' });
  const overview = el('section', { 'aria-labelledby': 'overview-title' }, [
    el('h2', { id: 'overview-title', text: 'Overview' }), counts, chart,
  ]);
  const form = el('form', { class: 'filters', role: 'search' });
  const field = (label, input) => el('label', {}, [label, input]);
  const statusSelect = el('select', { name: 'status' }, [el('option', { value: '', text: 'any' })].concat(
    STATUSES.map((s) => el('option', { value: s, text: s, selected: params.get('status') === s }))));
  const generationSelect = el('select', { name: 'generation' }, [el('option', { value: '', text: 'any' })].concat(
    GENERATIONS.map((g) => el('option', { value: g, text: g, selected: params.get('generation') === g }))));
  const toLocal = (ms) => (ms ? new Date(Number(ms) - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 16) : '');
  form.append(
    field('Status', statusSelect),
    field('Tool', el('input', { name: 'tool', value: params.get('tool') || '', autocomplete: 'off' })),
    field('Owner', el('input', { name: 'owner', value: params.get('owner') || '', autocomplete: 'off' })),
    field('Generation', generationSelect),
    field('Created from', el('input', { name: 'from', type: 'datetime-local', value: toLocal(params.get('from')) })),
    field('Created before', el('input', { name: 'to', type: 'datetime-local', value: toLocal(params.get('to')) })),
    field('Search (/)', el('input', { name: 'q', id: 'search', type: 'search', placeholder: 'id, requestor id, arguments', value: params.get('q') || '' })),
    el('button', { type: 'submit', class: 'primary', text: 'Apply' }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [key, value] of new FormData(form).entries()) {
      if (!value) continue;
      next.set(key, key === 'from' || key === 'to' ? String(new Date(value).getTime()) : value);
    }
    setFilters(next);
  });
  const admin = role === 'admin';
  const columns = 8 + (admin ? 1 : 0);
  const tbody = el('tbody', {}, [el('tr', { class: 'loading' }, [el('td', { colspan: columns, text: 'Loading tasks…' })])]);
  const headers = ['Task', 'Tool', 'Owner', 'Generation', 'Status', 'Message', 'Created', 'Duration'].map((h) => el('th', { scope: 'col', text: h }));
  const selectAll = el('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'Select every running task shown' });
  if (admin) headers.unshift(el('th', { scope: 'col', class: 'pick' }, [selectAll]));
  const table = el('table', { 'aria-label': 'Tasks', 'aria-busy': 'true' }, [el('thead', {}, [el('tr', {}, headers)]), tbody]);
  const more = el('button', { class: 'more', type: 'button', text: 'Load more', hidden: true });
  const note = el('p', { class: 'skip', id: 'scan-note' });
  more.addEventListener('click', () => loadMore(tbody, more, note));
  const exportQuery = (format) => { const q = new URLSearchParams(params); q.set('format', format); return 'api/export?' + q; };
  const bulk = el('button', { type: 'button', class: 'danger', id: 'bulk-cancel', disabled: true, text: 'Cancel selected…' });
  const bulkResult = el('span', { id: 'bulk-result', class: 'skip', role: 'status' });
  const toolbar = el('div', { class: 'toolbar' }, [
    admin ? bulk : null,
    bulkResult,
    el('span', { class: 'spacer' }),
    el('a', { class: 'button', id: 'export-csv', href: exportQuery('csv'), download: '', text: 'Export CSV' }),
    el('a', { class: 'button', id: 'export-jsonl', href: exportQuery('jsonl'), download: '', text: 'Export JSON lines' }),
  ]);
  const showSelection = () => {
    bulk.disabled = selected.size === 0;
    bulk.textContent = selected.size === 0 ? 'Cancel selected…' : 'Cancel ' + selected.size + ' selected…';
  };
  selected.clear();
  showSelection();
  tbody.addEventListener('change', (event) => {
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || !box.dataset.pick) return;
    if (box.checked) selected.add(box.dataset.pick); else selected.delete(box.dataset.pick);
    showSelection();
  });
  selectAll.addEventListener('change', () => {
    for (const box of tbody.querySelectorAll('input[data-pick]')) {
      box.checked = selectAll.checked;
      if (box.checked) selected.add(box.dataset.pick); else selected.delete(box.dataset.pick);
    }
    showSelection();
  });
  bulk.addEventListener('click', () => confirmBulkCancel(showSelection, bulkResult));
  main.append(overview, el('section', { 'aria-label': 'Filters' }, [form]), el('section', { class: 'tasks' }, [toolbar, table, note, more]));
  const render = (data) => {
    renderCounts(counts, data.counts, params);
    table.removeAttribute('aria-busy');
    if (listState.pages > 1) return;
    tbody.replaceChildren(...rows(data.tasks, data.now));
    if (data.tasks.length === 0) tbody.append(el('tr', {}, [el('td', { colspan: columns, class: 'empty' }, emptyState(params, data.counts))]));
    listState.cursor = data.nextCursor;
    more.hidden = !data.nextCursor;
    note.textContent = data.nextCursor && data.tasks.length === 0 ? 'Read ' + data.scanned + ' tasks without a match; load more to go on.' : '';
  };
  openStream(params.toString(), render, 'list');
  refreshOverview(chart);
}

// Nothing stored at all says how tasks get here; a filter that matches nothing offers to clear it.
function emptyState(params, counts) {
  const stored = Object.values(counts || {}).reduce((sum, n) => sum + n, 0);
  if (stored === 0 && [...params.keys()].length === 0) {
    return [
      el('strong', { text: 'No tasks yet.' }),
      ' A task appears here when a client calls a tool as a task, for example ',
      el('code', { text: 'mcp-tasks --url <this server>/mcp call <tool> name=value' }),
      ' (docs/client.md).',
    ];
  }
  return ['No tasks match these filters. ', el('a', { href: '#/', text: 'Clear the filters' })];
}

function confirmBulkCancel(showSelection, output) {
  const ids = [...selected];
  const count = ids.length + (ids.length === 1 ? ' task' : ' tasks');
  confirmAction({
    title: 'Cancel ' + count + '?',
    text: count + ' will end cancelled; their requestors see them cancelled. Tasks that finished meanwhile are left as they are.',
    confirm: 'Cancel ' + count,
  }, () => act('api/cancel', { taskIds: ids }).then((result) => {
    for (const id of ids) selected.delete(id);
    showSelection();
    const skipped = result.skipped.map((s) => shortText(s.taskId, 9) + ': ' + s.reason);
    output.textContent = 'Cancelled ' + result.cancelled.length + (result.cancelled.length === 1 ? ' task.' : ' tasks.') + (skipped.length ? ' Skipped ' + skipped.join('; ') + '.' : '');
  }).catch((error) => { output.textContent = 'Cancel failed: ' + error.message; }));
}

// The one confirmation dialog, worded for the action it guards.
function confirmAction(words, onConfirm) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = words.title;
  document.getElementById('confirm-text').textContent = words.text;
  const button = document.getElementById('confirm-cancel');
  button.textContent = words.confirm;
  button.className = words.safe ? 'primary' : 'danger';
  document.getElementById('confirm-back').textContent = words.back || 'Keep it running';
  dialog.returnValue = '';
  dialog.onclose = () => { if (dialog.returnValue === 'confirm') onConfirm(); };
  dialog.showModal();
  button.focus();
}

function renderCounts(container, counts, params) {
  container.replaceChildren(...STATUSES.map((status) => {
    const pressed = params.get('status') === status;
    return el('button', {
      class: 'count', type: 'button', 'aria-pressed': pressed ? 'true' : 'false',
      onclick: () => { const next = new URLSearchParams(params); if (pressed) next.delete('status'); else next.set('status', status); setFilters(next); },
    }, [statusCell(status), el('b', { text: String((counts && counts[status]) || 0) })]);
  }));
}

// A bar where the work said how much there is, the bare count where it did not; the numbers are the bar's text.
function progressOf(task) {
  const p = task.progress;
  if (!p) return null;
  const text = p.total > 0 ? p.progress + '/' + p.total : String(p.progress);
  return el('span', { class: 'progress' }, [
    p.total > 0 ? el('progress', { max: p.total, value: Math.min(p.progress, p.total), 'aria-hidden': 'true' }) : null,
    el('span', { text: ' ' + text + ' ' }),
  ]);
}

function rows(tasks, now) {
  const terminal = ['completed', 'failed', 'cancelled'];
  return tasks.map((task) => el('tr', { 'data-task': task.taskId }, [
    role === 'admin' ? el('td', { class: 'pick' }, [terminal.includes(task.status) ? null : el('input', {
      type: 'checkbox', 'data-pick': task.taskId, checked: selected.has(task.taskId), 'aria-label': 'Select ' + task.taskId,
    })]) : null,
    el('td', { class: 'id', 'data-label': 'Task' }, [
      el('a', { href: '#/task/' + encodeURIComponent(task.taskId), title: task.taskId, text: shortText(task.taskId, 9) }),
      copyButton(task.taskId, 'task id'),
    ]),
    el('td', { 'data-label': 'Tool', text: task.tool || '' }),
    el('td', { 'data-label': 'Owner', title: task.owner, text: shortOwner(task.owner) }),
    el('td', { 'data-label': 'Generation', text: task.generation }),
    el('td', { 'data-label': 'Status' }, [statusCell(task.status)]),
    el('td', { class: 'msg', 'data-label': 'Message', title: task.statusMessage || undefined }, [progressOf(task), task.statusMessage || '']),
    el('td', { 'data-label': 'Created' }, [el('time', { datetime: new Date(task.createdAt).toISOString(), title: fmtTime(task.createdAt), text: fmtShortTime(task.createdAt) })]),
    el('td', { 'data-label': 'Duration', 'data-created': task.durationMs === undefined ? task.createdAt : undefined,
      text: fmtDuration(task.durationMs === undefined ? now - task.createdAt : task.durationMs) }),
  ]));
}

function loadMore(tbody, more, note) {
  const params = new URLSearchParams(listState.params);
  params.set('cursor', listState.cursor);
  more.disabled = true;
  api('api/tasks?' + params).then((data) => {
    listState.pages += 1;
    tbody.append(...rows(data.tasks, data.now));
    listState.cursor = data.nextCursor;
    more.hidden = !data.nextCursor;
    note.textContent = data.nextCursor ? 'Read ' + data.scanned + ' more tasks.' : '';
  }).catch((error) => { note.textContent = error.message; }).finally(() => { more.disabled = false; });
}

function refreshOverview(chart) {
  api('api/overview').then((data) => {
    if (!chart.isConnected) return;
    chart.replaceChildren(drawChart(data));
    setTimeout(() => refreshOverview(chart), 10000);
  }).catch(() => {});
}

function drawChart(data) {
  const ns = 'http://www.w3.org/2000/svg';
  const max = Math.max(1, ...data.minutes.map((m) => Math.max(m.created, m.finished)));
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 600 90');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  const total = data.minutes.reduce((sum, m) => sum + m.created, 0);
  const done = data.minutes.reduce((sum, m) => sum + m.finished, 0);
  svg.setAttribute('aria-label', 'Last hour: ' + total + ' created, ' + done + ' finished');
  data.minutes.forEach((minute, i) => {
    for (const [kind, offset] of [['created', 0], ['finished', 5]]) {
      const h = (minute[kind] / max) * 86;
      const rect = document.createElementNS(ns, 'rect');
      rect.setAttribute('x', String(i * 10 + offset));
      rect.setAttribute('y', String(90 - h));
      rect.setAttribute('width', '4.5');
      rect.setAttribute('height', String(h));
      rect.setAttribute('class', kind);
      const title = document.createElementNS(ns, 'title');
      title.textContent = fmtTime(minute.at) + ': ' + minute[kind] + ' ' + kind;
      rect.append(title);
      svg.append(rect);
    }
  });
  // The axis: the clock time at the start, every quarter of an hour and now.
  const marks = data.minutes.length ? [0, 0.25, 0.5, 0.75, 1].map((f) => data.minutes[Math.min(data.minutes.length - 1, Math.round(f * (data.minutes.length - 1)))]) : [];
  const axis = el('div', { class: 'axis', 'aria-hidden': 'true' }, marks.map((m, i) => el('span', {
    text: i === marks.length - 1 ? 'now' : new Date(m.at).toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' }),
  })));
  const legend = el('div', { class: 'legend' }, [
    el('span', {}, [el('span', { class: 'swatch created' }), 'created per minute (' + total + ' in the last hour)']),
    el('span', {}, [el('span', { class: 'swatch finished' }), 'finished per minute (' + done + ')']),
    el('span', { text: 'duration p50 ' + (data.p50Ms === null ? '–' : fmtDuration(data.p50Ms)) + ' · p99 ' + (data.p99Ms === null ? '–' : fmtDuration(data.p99Ms)) }),
  ]);
  if (data.queue) legend.append(el('span', { text: 'queue: ' + data.queue.waiting + ' waiting, ' + data.queue.active + ' active, ' + data.queue.delayed + ' delayed · ' + data.queue.workers.length + ' live workers' + (data.queue.workers.length ? ' (' + data.queue.workers.map((w) => w.name).join(', ') + ')' : '') }));
  return el('div', {}, [svg, axis, legend]);
}

// ---- routes and keys -------------------------------------------------------------------------------------------

function route() {
  const match = /^#\\/task\\/(.+)$/.exec(location.hash);
  if (match) renderTask(decodeURIComponent(match[1]));
  else if (location.hash === '#/owners') renderOwners();
  else if (location.hash === '#/subscriptions') renderSubscriptions();
  else renderList();
  main.focus({ preventScroll: true });
}

setInterval(() => {
  for (const cell of document.querySelectorAll('[data-created]')) cell.textContent = fmtDuration(Date.now() - Number(cell.dataset.created));
}, 1000);

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement || event.target instanceof HTMLTextAreaElement;
  if (event.key === '/' && !typing) { const search = document.getElementById('search'); if (search) { event.preventDefault(); search.focus(); } }
  const dialogOpen = document.querySelector('dialog[open]') !== null;
  if (event.key === 'Escape' && !typing && !dialogOpen && location.hash.startsWith('#/task/')) location.hash = '#/';
});

window.addEventListener('hashchange', route);
api('api/session').then((session) => {
  role = session.role;
  document.getElementById('role').textContent = role === 'admin' ? 'admin' : 'read-only';
  route();
});
`;
