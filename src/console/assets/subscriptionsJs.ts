/**
 * The subscriptions view of the console's script: every live webhook subscription (owner, event type, URL, delivery
 * health). Values are written with textContent; URLs are text, never links. Joined after appJs.ts.
 */
export const SUBSCRIPTIONS_JS: string = `
// ---- webhook subscriptions -------------------------------------------------------------------------------------

function renderSubscriptions() {
  if (stream) stream.close();
  const tbody = el('tbody', {}, [el('tr', { class: 'loading' }, [el('td', { colspan: 7, text: 'Loading subscriptions…' })])]);
  const note = el('p', { class: 'skip', id: 'subscriptions-note' });
  main.replaceChildren(el('section', { 'aria-labelledby': 'subscriptions-title' }, [
    el('h1', { id: 'subscriptions-title', text: 'Webhook subscriptions' }),
    el('p', { class: 'skip', text: 'Each subscription takes one task’s events of one type to a URL, and ends with the task.' }),
    el('table', { 'aria-label': 'Subscriptions' }, [
      el('thead', {}, [el('tr', {}, ['Owner', 'Event type', 'URL', 'Status', 'Last delivered', 'Waiting', 'Task'].map((h) => el('th', { scope: 'col', text: h })))]),
      tbody,
    ]),
    note,
  ]));
  const load = () => api('api/subscriptions').then((data) => {
    if (!tbody.isConnected) return;
    tbody.replaceChildren(...data.subscriptions.map((s) => el('tr', { 'data-subscription': s.id }, [
      el('td', { title: s.owner }, [shortOwner(s.owner), copyButton(s.owner, 'owner')]),
      el('td', { 'data-label': 'Type' }, [el('code', { text: s.name })]),
      el('td', { 'data-label': 'URL', class: 'msg url', title: s.url, text: s.url }),
      el('td', { 'data-label': 'Status', class: s.active ? '' : 'error', text: deliveryStatus(s) + (s.lastError ? ' · ' + s.lastError : '') }),
      el('td', { 'data-label': 'Last delivered', text: s.lastDeliveryAt ? fmtTime(s.lastDeliveryAt) : 'never' }),
      el('td', { 'data-label': 'Waiting', text: String(s.queued) }),
      el('td', {}, s.scope ? [el('a', { href: '#/task/' + encodeURIComponent(s.scope), text: shortText(s.scope, 12) })] : []),
    ])));
    const empty = !data.supported ? 'This store keeps no webhook subscriptions.' : 'No live webhook subscription.';
    if (data.subscriptions.length === 0) tbody.append(el('tr', {}, [el('td', { colspan: 7, class: 'empty', text: empty })]));
    note.textContent = data.capped ? 'Read up to a bound: there may be more.' : '';
    setTimeout(load, 5000);
  }).catch((error) => { note.textContent = error.message; });
  load();
}
`;
