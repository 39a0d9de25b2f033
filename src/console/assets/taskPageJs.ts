/**
 * The task page of the console's script: details, questions with their answer forms, the result as a person reads
 * it, the timeline, and the admin's cancel and re-run. Joined after appJs.ts (it uses its helpers).
 */
export const TASK_PAGE_JS: string = `
// ---- one task ------------------------------------------------------------------------------------------------

// How many views of the task the live stream has drawn: an action's reply, read before the work moved on, may arrive
// after the stream drew the newer state, and the stream sends a view only when it changes, so that reply must not
// draw over it.
let streamDraws = 0;

function drawActionReply(data, drawsBefore) {
  if (streamDraws === drawsBefore) drawTask(data);
}

function renderTask(taskId) {
  answerForms.clear();
  main.replaceChildren(el('p', { class: 'loading', 'aria-busy': 'true', text: 'Loading task ' + taskId + '…' }));
  openStream('task=' + encodeURIComponent(taskId), (data) => {
    if (!data) { main.replaceChildren(el('section', {}, [el('h1', { text: 'Task not found' }), el('p', { text: taskId + ' is not in the store (or has expired).' }), el('a', { href: '#/', text: 'Back to the list' })])); return; }
    streamDraws++;
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

function idWithCopy(id, what) {
  return el('span', { class: 'id' }, [el('code', { text: id }), copyButton(id, what)]);
}

function questionSection(task) {
  const waiting = task.inputRequests.map((request) => el('div', { class: 'question', 'data-question': request.key }, [
    el('p', {}, [el('strong', { text: request.params && typeof request.params.message === 'string' ? request.params.message : request.method })]),
    fields([['Method', request.method], ['Asked', fmtTime(request.createdAt)], ['Key', request.key]]),
    role === 'admin' ? answerFormFor(task, request) : questionDetails(request),
  ]));
  return el('section', { 'aria-labelledby': 'questions-title' }, [el('h2', { id: 'questions-title', text: 'Waiting for input' })].concat(waiting));
}

function offerSection(task) {
  return el('section', { 'aria-labelledby': 'offers-title' }, [el('h2', { id: 'offers-title', text: 'Standing offers' })].concat(
    task.offers.map((offer) => el('div', { class: 'question offer', 'data-offer': offer.key }, [
      el('p', {}, [el('strong', { text: offer.message || offer.method })]),
      fields([['Key', offer.key], ['Method', offer.method], ['Offered', fmtTime(offer.createdAt)], ['State', offerState(offer)]]),
      role === 'admin' && !offer.answered && !task.terminal ? answerFormFor(task, { key: offer.key, method: offer.method, params: { requestedSchema: offer.requestedSchema } }) : null,
    ]))));
}

function drawTask(data) {
  const task = data.task;
  const focused = document.activeElement && document.activeElement.id;
  const header = el('section', { 'aria-labelledby': 'task-title' }, [
    el('p', {}, [el('a', { href: '#/', text: '← All tasks' })]),
    el('h1', { id: 'task-title' }, [(task.tool || task.method) + ' · ', idWithCopy(task.taskId, 'task id')]),
    el('p', {}, [statusCell(task.status), progressOf(task), task.statusMessage ? el('span', { class: 'msg', text: ' — ' + task.statusMessage }) : null]),
  ]);
  const actions = el('div', { class: 'actions start' });
  if (role === 'admin' && !task.terminal) {
    actions.append(el('button', { type: 'button', class: 'danger', id: 'cancel', text: 'Cancel task…', onclick: () => confirmCancel(task) }));
  }
  if (role === 'admin' && task.terminal && task.retrySafe) {
    actions.append(el('button', { type: 'button', class: 'primary', id: 'rerun', text: 'Re-run as a new task…', onclick: () => confirmRerun(task) }));
  }
  if (actions.childNodes.length) header.append(actions);
  const details = el('section', { 'aria-label': 'Details' }, [fields([
    ['Owner', idWithCopy(task.owner, 'owner')], ['Generation', task.generation],
    ['Requestor task id', task.requestorTaskId ? idWithCopy(task.requestorTaskId, 'requestor task id') : null], ['Created', fmtTime(task.createdAt)],
    ['Finished', fmtTime(task.terminalAt)],
    ['Duration', fmtDuration(task.durationMs === undefined ? data.now - task.createdAt : task.durationMs) + (task.terminal ? '' : ' so far')],
    ['Retention', retentionText(task)], ['Attempts', String(task.attempts)], ['Runner', task.runner],
    ['Lease until', fmtTime(task.leaseUntil)], ['Recoveries', task.recoveries ? String(task.recoveries) : ''],
    ['Retry-safe', task.retrySafe ? 'yes' : 'no'], ['Suspended', task.suspended ? 'yes' + (task.wakeAt ? ' until ' + fmtTime(task.wakeAt) : '') : ''],
    ['Cancelled by', task.cancelledBy],
  ])]);
  const parts = [header];
  if (task.inputRequests.length > 0) parts.push(questionSection(task));
  if (task.offers.length > 0) parts.push(offerSection(task));
  if (task.inputAnswers.length > 0) {
    parts.push(el('section', {}, [el('h2', { text: 'Answers not yet taken' }), jsonBlock(task.inputAnswers, 'Answers')]));
  }
  if (task.outcome) {
    const isError = task.outcome.kind === 'error';
    const body = isError ? errorView(task.outcome.error) : contentView(task.outcome.result);
    parts.push(el('section', { class: 'outcome' }, [el('h2', { class: isError ? 'error' : '', text: isError ? 'Error' : 'Result' })].concat(body)));
  }
  parts.push(details);
  parts.push(el('section', { class: 'arguments' }, [el('h2', { text: 'Arguments' }), jsonBlock(task.arguments, 'JSON', true)]));
  parts.push(activityRow(data));
  main.replaceChildren(...parts);
  if (focused) { const again = document.getElementById(focused); if (again) again.focus(); }
}

function timelineSection(timeline, createdAt) {
  const start = timeline.length ? timeline[0].at : createdAt;
  return el('section', { 'aria-labelledby': 'timeline-title' }, [
    el('h2', { id: 'timeline-title', text: 'Timeline' }),
    el('ol', { class: 'timeline' }, timeline.map((entry) => el('li', { 'data-kind': entry.kind, class: entry.kind === 'run_overdue' ? 'warn' : undefined }, [
      el('time', { datetime: new Date(entry.at).toISOString(), text: fmtTime(entry.at) }),
      el('span', { class: 'offset', text: '+' + ((entry.at - start) / 1000).toFixed(3) + ' s' }),
      el('span', {}, [describeEntry(entry), entry.link ? el('a', { href: '#/task/' + encodeURIComponent(entry.link), class: 'link', text: ' open' }) : null]),
    ]))),
  ]);
}

function confirmCancel(task) {
  confirmAction({
    title: 'Cancel this task?',
    text: 'Task ' + task.taskId + ' (' + (task.tool || task.method) + ', owner ' + task.owner + ') will end cancelled; its requestor sees it cancelled.',
    confirm: 'Cancel task',
  }, () => {
    const drawsBefore = streamDraws;
    return act('api/tasks/' + encodeURIComponent(task.taskId) + '/cancel')
      .then((data) => drawActionReply(data, drawsBefore))
      .catch((error) => { live.textContent = 'cancel failed: ' + error.message; });
  });
}

function confirmRerun(task) {
  confirmAction({
    title: 'Re-run this task?',
    text: 'A new task runs ' + (task.tool || task.method) + ' again with the same arguments, for owner ' + task.owner + '. Both timelines link the two.',
    confirm: 'Re-run', back: 'Back', safe: true,
  }, () => act('api/tasks/' + encodeURIComponent(task.taskId) + '/rerun')
    .then((data) => { location.hash = '#/task/' + encodeURIComponent(data.taskId); })
    .catch((error) => { live.textContent = 're-run failed: ' + error.message; }));
}
`;
