import type { InputAnswer, InputRequest } from '../engine/index.js';
import { ConsoleRefusal } from './ConsoleRefusal.js';

/** The longest text an operator may send as a sampling answer or one form field. */
export const MAX_ANSWER_TEXT = 16 * 1024;

type FieldValue = string | number | boolean;

/** An operator always answers with a result (a decline is a result too). */
export type OperatorAnswer = Extract<InputAnswer, { result: unknown }>;

/**
 * The answer an operator's form makes for a question the work asked: an elicitation's `{ action, content }`, checked
 * against the question's `requestedSchema` (only its own fields, of their types and enums, the required ones present),
 * or a sampling answer holding the operator's text. Anything else is refused with a readable reason (400).
 */
export function operatorAnswer(question: InputRequest, body: Record<string, unknown>): OperatorAnswer {
  if (question.method === 'elicitation/create') return elicitationAnswer(question, body);
  if (question.method === 'sampling/createMessage') {
    const text = body['text'];
    if (typeof text !== 'string' || text.trim() === '') throw new ConsoleRefusal(400, 'the answer needs a text');
    if (text.length > MAX_ANSWER_TEXT) throw new ConsoleRefusal(400, `the text is over ${MAX_ANSWER_TEXT} characters`);
    return { result: { role: 'assistant', content: { type: 'text', text }, model: 'operator', stopReason: 'endTurn' } };
  }
  throw new ConsoleRefusal(400, `a ${question.method} request cannot be answered from the console`);
}

function elicitationAnswer(question: InputRequest, body: Record<string, unknown>): OperatorAnswer {
  const action = body['action'];
  if (action === 'decline' || action === 'cancel') return { result: { action } };
  if (action !== 'accept') throw new ConsoleRefusal(400, 'action must be accept, decline or cancel');
  const schema = asObject(question.params?.['requestedSchema']) ?? {};
  const properties = asObject(schema['properties']) ?? {};
  const required = Array.isArray(schema['required']) ? schema['required'].filter((r) => typeof r === 'string') : [];
  const given = asObject(body['content']) ?? {};
  const content: Record<string, FieldValue> = {};
  for (const [name, value] of Object.entries(given)) {
    const field = asObject(properties[name]);
    if (!field || !Object.hasOwn(properties, name)) throw new ConsoleRefusal(400, `the question has no field ${name}`);
    content[name] = fieldValue(name, field, value);
  }
  for (const name of required) {
    if (!(name in content)) throw new ConsoleRefusal(400, `${name} is required`);
  }
  return { result: { action: 'accept', content } };
}

/** One field's value, of the type its schema names (a form sends numbers as numbers, checkboxes as booleans). */
function fieldValue(name: string, field: Record<string, unknown>, value: unknown): FieldValue {
  const options = enumOf(field);
  if (options) {
    if (typeof value !== 'string' || !options.includes(value))
      throw new ConsoleRefusal(400, `${name} must be one of ${options.join(', ')}`);
    return value;
  }
  switch (field['type']) {
    case 'boolean':
      if (typeof value !== 'boolean') throw new ConsoleRefusal(400, `${name} must be true or false`);
      return value;
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new ConsoleRefusal(400, `${name} must be a number`);
      if (field['type'] === 'integer' && !Number.isInteger(value))
        throw new ConsoleRefusal(400, `${name} must be a whole number`);
      const { minimum, maximum } = field;
      if (typeof minimum === 'number' && value < minimum) throw new ConsoleRefusal(400, `${name} must be ≥ ${minimum}`);
      if (typeof maximum === 'number' && value > maximum) throw new ConsoleRefusal(400, `${name} must be ≤ ${maximum}`);
      return value;
    }
    default: {
      if (typeof value !== 'string') throw new ConsoleRefusal(400, `${name} must be a text`);
      if (value.length > MAX_ANSWER_TEXT)
        throw new ConsoleRefusal(400, `${name} is over ${MAX_ANSWER_TEXT} characters`);
      const { minLength, maxLength } = field;
      if (typeof minLength === 'number' && value.length < minLength)
        throw new ConsoleRefusal(400, `${name} needs at least ${minLength} characters`);
      if (typeof maxLength === 'number' && value.length > maxLength)
        throw new ConsoleRefusal(400, `${name} takes at most ${maxLength} characters`);
      return value;
    }
  }
}

/** The values of an `enum`, or of a `oneOf` of `const`s (titled options), as elicitation schemas write choices. */
export function enumOf(field: Record<string, unknown>): string[] | undefined {
  if (Array.isArray(field['enum'])) return field['enum'].filter((v): v is string => typeof v === 'string');
  if (Array.isArray(field['oneOf'])) {
    const values = field['oneOf'].map((option) => asObject(option)?.['const']);
    if (values.every((v) => typeof v === 'string')) return values as string[];
  }
  return undefined;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
