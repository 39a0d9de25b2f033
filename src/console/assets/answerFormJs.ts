/**
 * The answer form of the console's script: for an elicitation, a form made from its `requestedSchema` (text, number,
 * checkbox and choice fields, required ones marked); for sampling, the messages and a text box. The server checks the
 * answer again against the question (operatorAnswer.ts). Joined after appJs.ts.
 */
export const ANSWER_FORM_JS: string = `
// ---- answering a question ----------------------------------------------------------------------------------------

// A form is kept while its question waits, so the live page's redraws keep what the operator typed.
const answerForms = new Map();

function answerFormFor(task, request) {
  const id = task.taskId + ' ' + request.key;
  if (!answerForms.has(id)) {
    const form = request.method === 'elicitation/create' ? elicitationForm(task, request)
      : request.method === 'sampling/createMessage' ? samplingForm(task, request) : null;
    if (!form) return questionDetails(request);
    answerForms.set(id, form);
  }
  return answerForms.get(id);
}

// What a question asks, for a reader who cannot answer it.
function questionDetails(request) {
  const params = request.params || {};
  if (request.method === 'sampling/createMessage') return messagesView(params.messages);
  return params.requestedSchema ? jsonBlock(params.requestedSchema, 'Requested schema', false) : null;
}

function messagesView(messages) {
  if (!Array.isArray(messages)) return null;
  return el('ol', { class: 'messages' }, messages.map((message) => {
    const content = message && message.content;
    const text = content && content.type === 'text' && typeof content.text === 'string' ? content.text : JSON.stringify(content);
    return el('li', {}, [el('span', { class: 'skip', text: String(message && message.role) + ': ' }), el('span', { class: 'text', text })]);
  }));
}

function choicesOf(field) {
  if (Array.isArray(field.enum)) {
    const names = Array.isArray(field.enumNames) ? field.enumNames : [];
    return field.enum.map((value, i) => ({ value: String(value), title: String(names[i] || value) }));
  }
  if (Array.isArray(field.oneOf) && field.oneOf.every((o) => o && typeof o.const === 'string')) {
    return field.oneOf.map((o) => ({ value: o.const, title: String(o.title || o.const) }));
  }
  return null;
}

let answerFieldSeq = 0;

function schemaField(name, field, isRequired) {
  const inputId = 'answer-field-' + (++answerFieldSeq);
  const choices = choicesOf(field);
  let input;
  if (choices) {
    input = el('select', { id: inputId, name, required: isRequired }, (isRequired ? [] : [el('option', { value: '', text: '—' })]).concat(
      choices.map((c) => el('option', { value: c.value, text: c.title, selected: field.default === c.value }))));
  } else if (field.type === 'boolean') {
    input = el('input', { id: inputId, name, type: 'checkbox', checked: field.default === true });
  } else if (field.type === 'number' || field.type === 'integer') {
    input = el('input', { id: inputId, name, type: 'number', step: field.type === 'integer' ? '1' : 'any', min: field.minimum, max: field.maximum, required: isRequired, value: field.default });
  } else {
    const type = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[field.format] || 'text';
    input = el('input', { id: inputId, name, type, required: isRequired, minlength: field.minLength, maxlength: field.maxLength, value: field.default, autocomplete: 'off' });
  }
  const label = el('label', { class: field.type === 'boolean' ? 'check' : undefined, for: inputId }, [
    el('span', { text: String(field.title || name) + (isRequired ? ' (required)' : '') }), input,
    field.description ? el('span', { class: 'hint', text: String(field.description) }) : null,
  ]);
  const read = () => {
    if (field.type === 'boolean' && !choices) return input.checked;
    if (input.value === '') return undefined;
    return (field.type === 'number' || field.type === 'integer') && !choices ? Number(input.value) : input.value;
  };
  return { label, read };
}

function elicitationForm(task, request) {
  const schema = (request.params && request.params.requestedSchema) || {};
  const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const inputs = Object.entries(properties).map(([name, field]) => [name, schemaField(name, field || {}, required.includes(name))]);
  const form = el('form', { class: 'answer', 'data-answer': request.key, 'aria-label': 'Answer' }, inputs.map(([, f]) => f.label));
  const problem = el('p', { class: 'error', role: 'alert' });
  const send = (action) => {
    const body = { key: request.key, action };
    if (action === 'accept') {
      body.content = {};
      for (const [name, f] of inputs) { const value = f.read(); if (value !== undefined) body.content[name] = value; }
    }
    submitAnswer(task, body, form, problem);
  };
  form.addEventListener('submit', (event) => { event.preventDefault(); send('accept'); });
  form.append(problem, el('div', { class: 'actions start' }, [
    el('button', { type: 'submit', class: 'primary', text: 'Send answer' }),
    el('button', { type: 'button', text: 'Decline', onclick: () => send('decline') }),
  ]));
  return form;
}

function samplingForm(task, request) {
  const inputId = 'answer-field-' + (++answerFieldSeq);
  const text = el('textarea', { id: inputId, name: 'text', rows: 4, required: true });
  const problem = el('p', { class: 'error', role: 'alert' });
  const form = el('form', { class: 'answer', 'data-answer': request.key, 'aria-label': 'Answer' }, [
    messagesView(request.params && request.params.messages),
    el('label', { for: inputId }, [el('span', { text: 'The reply the work receives (as the assistant)' }), text]),
    problem,
    el('div', { class: 'actions start' }, [el('button', { type: 'submit', class: 'primary', text: 'Send answer' })]),
  ]);
  form.addEventListener('submit', (event) => { event.preventDefault(); submitAnswer(task, { key: request.key, text: text.value }, form, problem); });
  return form;
}

function submitAnswer(task, body, form, problem) {
  for (const control of form.elements) control.disabled = true;
  problem.textContent = '';
  const drawsBefore = streamDraws;
  act('api/tasks/' + encodeURIComponent(task.taskId) + '/answer', body).then((data) => {
    answerForms.delete(task.taskId + ' ' + body.key);
    live.textContent = 'answer sent';
    drawActionReply(data, drawsBefore);
  }).catch((error) => {
    problem.textContent = error.message;
    for (const control of form.elements) control.disabled = false;
  });
}
`;
