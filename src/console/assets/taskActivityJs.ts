/**
 * Beside a task's timeline on its page: its event log (what its work emitted) and its webhook subscriptions with the
 * deliveries still in the outbox. Every value is written with textContent; a URL is shown as text, never as a link.
 * Joined after appJs.ts and taskPageJs.ts (it uses their helpers).
 */
export const TASK_ACTIVITY_JS: string = `
// ---- a task's events and deliveries ----------------------------------------------------------------------------

function eventsSection(events) {
  if (!events) return null;
  const shown = events.entries.length;
  const title = 'Events (' + (events.total > shown ? 'latest ' + shown + ' of ' + events.total : String(events.total)) + ')';
  const body = shown === 0
    ? el('p', { class: 'empty', text: 'Nothing emitted yet.' })
    : el('ol', { class: 'events' }, events.entries.slice().reverse().map((entry) => el('li', { 'data-seq': String(entry.seq) }, [
      el('span', { class: 'seq', text: '#' + entry.seq }),
      el('code', { class: 'type', text: entry.type }),
      el('time', { datetime: new Date(entry.at).toISOString(), text: fmtTime(entry.at) }),
      el('pre', { class: 'event-data', text: JSON.stringify(entry.data) }),
    ])));
  return el('section', { 'aria-labelledby': 'events-title', class: 'events' }, [el('h2', { id: 'events-title', text: title }), body]);
}

function deliveryStatus(sub) {
  return sub.active ? 'active' : 'suspended';
}

function deliveriesTable(deliveries) {
  if (deliveries.length === 0) return el('p', { class: 'empty', text: 'No delivery waiting.' });
  return el('table', { class: 'deliveries', 'aria-label': 'Deliveries' }, [
    el('thead', {}, [el('tr', {}, ['#', 'Kind', 'Attempts', 'Last status', 'Next attempt'].map((h) => el('th', { scope: 'col', text: h })))]),
    el('tbody', {}, deliveries.map((d) => el('tr', { 'data-delivery': String(d.seq) }, [
      el('td', { text: String(d.seq) }),
      el('td', { 'data-label': 'Kind', text: d.kind }),
      el('td', { 'data-label': 'Attempts', text: String(d.attempts) }),
      el('td', { 'data-label': 'Last status', class: 'msg', text: d.lastStatus === null ? '–' : d.lastStatus }),
      el('td', { 'data-label': 'Next attempt', text: d.done ? 'done' : d.inFlight ? 'sending now' : fmtTime(d.nextAttemptAt) }),
    ]))),
  ]);
}

function deliveriesSection(subscriptions) {
  if (!subscriptions) return null;
  const body = subscriptions.length === 0
    ? [el('p', { class: 'empty', text: 'No webhook subscription takes this task’s events (they end with the task).' })]
    : subscriptions.map((sub) => el('div', { class: 'subscription', 'data-subscription': sub.id }, [
      el('p', {}, [el('code', { class: 'type', text: sub.name }), ' → ', el('span', { class: 'url', text: sub.url })]),
      fields([
        ['Status', deliveryStatus(sub)], ['Last delivered', fmtTime(sub.lastDeliveryAt)], ['Last error', sub.lastError],
        ['Failing since', fmtTime(sub.failedSince)], ['Waiting', String(sub.queued)], ['Grant ends', fmtTime(sub.expiresAt)],
      ]),
      deliveriesTable(sub.deliveries),
    ]));
  return el('section', { 'aria-labelledby': 'deliveries-title', class: 'webhooks' }, [el('h2', { id: 'deliveries-title', text: 'Webhook deliveries' })].concat(body));
}

// The timeline, with the events and deliveries beside it where the screen is wide enough.
function activityRow(data) {
  const side = [eventsSection(data.events), deliveriesSection(data.webhooks)].filter(Boolean);
  const timeline = timelineSection(data.timeline, data.task.createdAt);
  if (side.length === 0) return timeline;
  return el('div', { class: 'beside' }, [timeline, el('div', { class: 'side' }, side)]);
}
`;
