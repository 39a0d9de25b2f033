/**
 * The console's script, without a framework: hash routes (`#/?filters`, `#/task/<id>`), the JSON API beside it, live
 * updates over server-sent events. Every value from a task is written with textContent, never parsed as HTML.
 * (No template literals inside: the script itself sits in one.)
 */
import { TASK_GENERATIONS } from '../../protocol/index.js';

export const APP_JS = `
const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const GENERATIONS = ${JSON.stringify(TASK_GENERATIONS)};
const main = document.getElementById('main');
const live = document.getElementById('live');
let role = 'readonly';
let stream;
let listState;

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

function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
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
    field('Search id / arguments (/)', el('input', { name: 'q', id: 'search', type: 'search', value: params.get('q') || '' })),
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
  const tbody = el('tbody');
  const table = el('table', { 'aria-label': 'Tasks' }, [
    el('thead', {}, [el('tr', {}, ['Task', 'Tool', 'Owner', 'Generation', 'Status', 'Message', 'Created', 'Duration']
      .map((h) => el('th', { scope: 'col', text: h })))]),
    tbody,
  ]);
  const more = el('button', { class: 'more', type: 'button', text: 'Load more', hidden: true });
  const note = el('p', { class: 'skip', id: 'scan-note' });
  more.addEventListener('click', () => loadMore(tbody, more, note));
  main.append(overview, el('section', { 'aria-label': 'Filters' }, [form]), el('section', {}, [table, note, more]));
  const render = (data) => {
    renderCounts(counts, data.counts, params);
    if (listState.pages > 1) return;
    tbody.replaceChildren(...rows(data.tasks, data.now));
    if (data.tasks.length === 0) tbody.append(el('tr', {}, [el('td', { colspan: 8, class: 'empty', text: 'No tasks match.' })]));
    listState.cursor = data.nextCursor;
    more.hidden = !data.nextCursor;
    note.textContent = data.nextCursor && data.tasks.length === 0 ? 'Read ' + data.scanned + ' tasks without a match; load more to go on.' : '';
  };
  openStream(params.toString(), render, 'list');
  refreshOverview(chart);
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
  return tasks.map((task) => el('tr', { 'data-task': task.taskId }, [
    el('td', { class: 'id', 'data-label': 'Task' }, [el('a', { href: '#/task/' + encodeURIComponent(task.taskId), text: task.taskId })]),
    el('td', { 'data-label': 'Tool', text: task.tool || '' }),
    el('td', { 'data-label': 'Owner', text: task.owner }),
    el('td', { 'data-label': 'Generation', text: task.generation }),
    el('td', { 'data-label': 'Status' }, [statusCell(task.status)]),
    el('td', { class: 'msg', 'data-label': 'Message' }, [progressOf(task), task.statusMessage || '']),
    el('td', { 'data-label': 'Created' }, [el('time', { datetime: new Date(task.createdAt).toISOString(), text: fmtTime(task.createdAt) })]),
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
  const legend = el('div', { class: 'legend' }, [
    el('span', {}, [el('span', { class: 'swatch created' }), 'created per minute (' + total + ' in the last hour)']),
    el('span', {}, [el('span', { class: 'swatch finished' }), 'finished per minute (' + done + ')']),
    el('span', { text: 'duration p50 ' + (data.p50Ms === null ? '–' : fmtDuration(data.p50Ms)) + ' · p99 ' + (data.p99Ms === null ? '–' : fmtDuration(data.p99Ms)) }),
  ]);
  if (data.queue) legend.append(el('span', { text: 'queue: ' + data.queue.waiting + ' waiting, ' + data.queue.active + ' active, ' + data.queue.delayed + ' delayed · ' + data.queue.workers.length + ' live workers' + (data.queue.workers.length ? ' (' + data.queue.workers.map((w) => w.name).join(', ') + ')' : '') }));
  return el('div', {}, [svg, legend]);
}

// ---- one task ------------------------------------------------------------------------------------------------

function renderTask(taskId) {
  main.replaceChildren(el('p', { text: 'Loading ' + taskId + '…' }));
  openStream('task=' + encodeURIComponent(taskId), (data) => {
    if (!data) { main.replaceChildren(el('section', {}, [el('h1', { text: 'Task not found' }), el('p', { text: taskId + ' is not in the store (or has expired).' }), el('a', { href: '#/', text: 'Back to the list' })])); return; }
    drawTask(data);
  }, 'task');
}

function fields(pairs) {
  const dl = el('dl', { class: 'fields' });
  for (const [name, value] of pairs) {
    if (value === undefined || value === null || value === '') continue;
    dl.append(el('dt', { text: name }), el('dd', {}, [value instanceof Node ? value : String(value)]));
  }
  return dl;
}

function json(value) {
  return el('pre', { text: JSON.stringify(value, null, 2) });
}

function offerState(offer) {
  if (!offer.answered) return 'not answered';
  return offer.consumed ? 'answered, taken by the task' : 'answered, not yet taken by the task';
}

function retentionText(task) {
  const r = task.retention;
  const ms = r.kind === 'ttl' ? r.ttlMs : r.keepAliveMs;
  const span = ms === null ? 'unlimited' : fmtDuration(ms);
  return (r.kind === 'ttl' ? 'ttl ' + span + ' from creation' : 'keep-alive ' + span + ' after the end') + (task.expiresAt ? ' · expires ' + fmtTime(task.expiresAt) : '');
}

function drawTask(data) {
  const task = data.task;
  const focused = document.activeElement && document.activeElement.id;
  const header = el('section', { 'aria-labelledby': 'task-title' }, [
    el('p', {}, [el('a', { href: '#/', text: '← All tasks' })]),
    el('h1', { id: 'task-title', text: (task.tool || task.method) + ' · ' + task.taskId }),
    el('p', {}, [statusCell(task.status), progressOf(task), task.statusMessage ? el('span', { class: 'msg', text: ' — ' + task.statusMessage }) : null]),
  ]);
  if (role === 'admin' && !task.terminal) {
    header.append(el('button', { type: 'button', class: 'danger', id: 'cancel', text: 'Cancel task…', onclick: () => confirmCancel(task) }));
  }
  const details = el('section', { 'aria-label': 'Details' }, [fields([
    ['Owner', task.owner], ['Generation', task.generation], ['Requestor task id', task.requestorTaskId], ['Created', fmtTime(task.createdAt)],
    ['Finished', fmtTime(task.terminalAt)],
    ['Duration', fmtDuration(task.durationMs === undefined ? data.now - task.createdAt : task.durationMs) + (task.terminal ? '' : ' so far')],
    ['Retention', retentionText(task)], ['Attempts', String(task.attempts)], ['Runner', task.runner],
    ['Lease until', fmtTime(task.leaseUntil)], ['Recoveries', task.recoveries ? String(task.recoveries) : ''],
    ['Retry-safe', task.retrySafe ? 'yes' : 'no'], ['Suspended', task.suspended ? 'yes' + (task.wakeAt ? ' until ' + fmtTime(task.wakeAt) : '') : ''],
    ['Cancelled by', task.cancelledBy],
  ])]);
  const parts = [header];
  if (task.inputRequests.length > 0) {
    parts.push(el('section', { 'aria-labelledby': 'questions-title' }, [el('h2', { id: 'questions-title', text: 'Waiting for input' })].concat(
      task.inputRequests.map((request) => el('div', { class: 'question' }, [
        el('p', {}, [el('strong', { text: request.params && request.params.message ? request.params.message : request.method })]),
        fields([['Method', request.method], ['Asked', fmtTime(request.createdAt)], ['Key', request.key]]),
        request.params && request.params.requestedSchema ? json(request.params.requestedSchema) : null,
      ])))));
  }
  if (task.offers.length > 0) {
    parts.push(el('section', { 'aria-labelledby': 'offers-title' }, [el('h2', { id: 'offers-title', text: 'Standing offers' })].concat(
      task.offers.map((offer) => el('div', { class: 'question offer', 'data-offer': offer.key }, [
        el('p', {}, [el('strong', { text: offer.message || offer.method })]),
        fields([['Key', offer.key], ['Method', offer.method], ['Offered', fmtTime(offer.createdAt)], ['State', offerState(offer)]]),
      ])))));
  }
  if (task.inputAnswers.length > 0) {
    parts.push(el('section', {}, [el('h2', { text: 'Answers not yet taken' }), json(task.inputAnswers)]));
  }
  parts.push(details);
  parts.push(el('section', {}, [el('h2', { text: 'Arguments' }), json(task.arguments)]));
  if (task.outcome) {
    const isError = task.outcome.kind === 'error';
    parts.push(el('section', {}, [el('h2', { class: isError ? 'error' : '', text: isError ? 'Error' : 'Result' }), json(isError ? task.outcome.error : task.outcome.result)]));
  }
  const start = data.timeline.length ? data.timeline[0].at : task.createdAt;
  parts.push(el('section', { 'aria-labelledby': 'timeline-title' }, [
    el('h2', { id: 'timeline-title', text: 'Timeline' }),
    el('ol', { class: 'timeline' }, data.timeline.map((entry) => el('li', { 'data-kind': entry.kind }, [
      el('time', { datetime: new Date(entry.at).toISOString(), text: fmtTime(entry.at) }),
      el('span', { class: 'offset', text: '+' + ((entry.at - start) / 1000).toFixed(3) + ' s' }),
      el('span', { text: describeEntry(entry) }),
    ]))),
  ]));
  main.replaceChildren(...parts);
  if (focused) { const again = document.getElementById(focused); if (again) again.focus(); }
}

function confirmCancel(task) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = 'Task ' + task.taskId + ' (' + (task.tool || task.method) + ', owner ' + task.owner + ') will end cancelled; its requestor sees it cancelled.';
  dialog.returnValue = '';
  dialog.onclose = () => {
    if (dialog.returnValue !== 'cancel') return;
    api('api/tasks/' + encodeURIComponent(task.taskId) + '/cancel', { method: 'POST', headers: { 'x-console-request': '1' } })
      .then((data) => drawTask(data))
      .catch((error) => { live.textContent = 'cancel failed: ' + error.message; });
  };
  dialog.showModal();
  document.getElementById('confirm-cancel').focus();
}

// ---- routes and keys -------------------------------------------------------------------------------------------

function route() {
  const match = /^#\\/task\\/(.+)$/.exec(location.hash);
  if (match) renderTask(decodeURIComponent(match[1]));
  else renderList();
  main.focus({ preventScroll: true });
}

setInterval(() => {
  for (const cell of document.querySelectorAll('[data-created]')) cell.textContent = fmtDuration(Date.now() - Number(cell.dataset.created));
}, 1000);

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement;
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
