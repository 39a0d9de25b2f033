/** The owners view of the console's script: each owner's running, waiting and recent tasks. Joined after appJs.ts. */
export const OWNERS_JS = `
// ---- owners ------------------------------------------------------------------------------------------------------

function renderOwners() {
  if (stream) stream.close();
  const tbody = el('tbody', {}, [el('tr', { class: 'loading' }, [el('td', { colspan: 5, text: 'Loading owners…' })])]);
  const note = el('p', { class: 'skip', id: 'owners-note' });
  main.replaceChildren(el('section', { 'aria-labelledby': 'owners-title' }, [
    el('h1', { id: 'owners-title', text: 'Owners' }),
    el('p', { class: 'skip', text: 'Running and waiting tasks of each owner, and the tasks each created in the last hour; the busiest first.' }),
    el('table', { 'aria-label': 'Owners' }, [
      el('thead', {}, [el('tr', {}, ['Owner', 'Running', 'Waiting for input', 'Created in the last hour', ''].map((h) => el('th', { scope: 'col', text: h })))]),
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
      el('td', {}, [el('a', { href: '#/?' + new URLSearchParams({ owner: o.owner }), text: 'tasks' })]),
    ])));
    if (data.owners.length === 0) tbody.append(el('tr', {}, [el('td', { colspan: 5, class: 'empty', text: 'No owner has a running or recent task.' })]));
    const names = { working: 'running', inputRequired: 'waiting', lastHour: 'last hour' };
    note.textContent = data.capped.length ? 'Counted from the first tasks read of each kind: ' + data.capped.map((k) => names[k]).join(', ') + ' may be more.' : '';
    setTimeout(load, 5000);
  }).catch((error) => { note.textContent = error.message; });
  load();
}
`;
