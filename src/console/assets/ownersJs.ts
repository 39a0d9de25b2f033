/**
 * The owners view of the console's script: each owner's running, waiting and recent tasks, stored bytes and refusals,
 * and the queue's depth over the last hour as a chart with a time axis. Joined after appJs.ts.
 */
export const OWNERS_JS: string = `
// ---- owners ------------------------------------------------------------------------------------------------------

const REFUSAL_NAMES = { concurrent_tasks: 'running', stored_tasks: 'stored', stored_bytes: 'bytes', total_bytes: 'total bytes', rate: 'rate' };

function fmtBytes(bytes) {
  if (bytes === undefined || bytes === null) return '–';
  if (bytes < 1024) return bytes + ' B';
  if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + ' KiB';
  if (bytes < 1024 * 1024 * 1024) return (bytes / 1024 / 1024).toFixed(1) + ' MiB';
  return (bytes / 1024 / 1024 / 1024).toFixed(2) + ' GiB';
}

function refusedText(refused) {
  const parts = Object.entries(refused || {}).filter(([, n]) => n > 0);
  if (parts.length === 0) return '0';
  const total = parts.reduce((sum, [, n]) => sum + n, 0);
  return total + ' (' + parts.map(([limit, n]) => (REFUSAL_NAMES[limit] || limit) + ' ' + n).join(', ') + ')';
}

// Waiting tasks over the last hour: one bar per reading, placed by its time; the axis marks every quarter hour.
function queueChart(samples, now) {
  const ns = 'http://www.w3.org/2000/svg';
  const start = now - 3600000;
  const max = Math.max(1, ...samples.map((s) => s.waiting));
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 600 60');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'chart queue');
  svg.setAttribute('role', 'img');
  const last = samples[samples.length - 1];
  svg.setAttribute('aria-label', 'Queue depth over the last hour: ' + (last ? last.waiting + ' waiting now, at most ' + max : 'no reading yet'));
  for (const sample of samples) {
    const h = (sample.waiting / max) * 56;
    const rect = document.createElementNS(ns, 'rect');
    rect.setAttribute('x', String(Math.max(0, Math.min(596, ((sample.at - start) / 3600000) * 600 - 2))));
    rect.setAttribute('y', String(60 - h));
    rect.setAttribute('width', '4');
    rect.setAttribute('height', String(Math.max(h, 0.5)));
    rect.setAttribute('class', 'waiting');
    const title = document.createElementNS(ns, 'title');
    title.textContent = fmtTime(sample.at) + ': ' + sample.waiting + ' waiting, ' + sample.running + ' running';
    rect.append(title);
    svg.append(rect);
  }
  const axis = el('div', { class: 'axis', 'aria-hidden': 'true' }, [0, 0.25, 0.5, 0.75, 1].map((f) => el('span', {
    text: f === 1 ? 'now' : new Date(start + f * 3600000).toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' }),
  })));
  const legend = el('div', { class: 'legend' }, [
    el('span', {}, [el('span', { class: 'swatch waiting' }), 'tasks waiting for a slot or a worker' + (last ? ' (' + last.waiting + ' now, ' + last.running + ' running; at most ' + max + ' this hour)' : ' (no reading yet)')]),
  ]);
  return el('div', { id: 'queue-chart' }, [svg, axis, legend]);
}

function renderOwners() {
  if (stream) stream.close();
  const tbody = el('tbody', {}, [el('tr', { class: 'loading' }, [el('td', { colspan: 7, text: 'Loading owners…' })])]);
  const note = el('p', { class: 'skip', id: 'owners-note' });
  const queue = el('div', { id: 'queue' });
  main.replaceChildren(el('section', { 'aria-labelledby': 'queue-title' }, [
    el('h2', { id: 'queue-title', text: 'Queue depth, last hour' }), queue,
  ]), el('section', { 'aria-labelledby': 'owners-title' }, [
    el('h1', { id: 'owners-title', text: 'Owners' }),
    el('p', { class: 'skip', text: 'Running and waiting tasks of each owner, the tasks each created in the last hour, the bytes its stored tasks take, and how often this process refused it at a limit; the busiest first.' }),
    el('table', { 'aria-label': 'Owners' }, [
      el('thead', {}, [el('tr', {}, ['Owner', 'Running', 'Waiting for input', 'Created in the last hour', 'Stored', 'Refused', ''].map((h) => el('th', { scope: 'col', text: h })))]),
      tbody,
    ]),
    note,
  ]));
  const load = () => api('api/owners').then((data) => {
    if (!tbody.isConnected) return;
    tbody.replaceChildren(...data.owners.map((o) => el('tr', { 'data-owner': o.owner }, [
      el('td', { title: o.owner }, [shortText(o.owner, 48), copyButton(o.owner, 'owner')]),
      el('td', { 'data-label': 'Running', text: String(o.working) }),
      el('td', { 'data-label': 'Waiting', text: String(o.inputRequired) }),
      el('td', { 'data-label': 'Last hour', text: String(o.lastHour) }),
      el('td', { 'data-label': 'Stored', class: 'bytes', title: o.storedBytes === undefined ? 'this store does not count bytes per owner' : o.storedBytes + ' bytes', text: fmtBytes(o.storedBytes) }),
      el('td', { 'data-label': 'Refused', class: 'refused', text: refusedText(o.refused) }),
      el('td', {}, [el('a', { href: '#/?' + new URLSearchParams({ owner: o.owner }), text: 'tasks' })]),
    ])));
    if (data.owners.length === 0) tbody.append(el('tr', {}, [el('td', { colspan: 7, class: 'empty', text: 'No owner has a running or recent task.' })]));
    const names = { working: 'running', inputRequired: 'waiting', lastHour: 'last hour' };
    note.textContent = data.capped.length ? 'Counted from the first tasks read of each kind: ' + data.capped.map((k) => names[k]).join(', ') + ' may be more.' : '';
    queue.replaceChildren(data.queue ? queueChart(data.queue, data.now) : el('p', { class: 'empty', text: 'No executor is read by this console (a console over a store alone), so no queue depth.' }));
    setTimeout(load, 5000);
  }).catch((error) => { note.textContent = error.message; });
  load();
}
`;
