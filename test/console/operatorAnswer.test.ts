import { describe, expect, it } from 'vitest';

import { ConsoleRefusal } from '../../src/console/ConsoleRefusal.js';
import { csvCell } from '../../src/console/exportTasks.js';
import { operatorAnswer } from '../../src/console/operatorAnswer.js';
import type { InputRequest } from '../../src/engine/index.js';

const question = {
  method: 'elicitation/create',
  params: {
    message: 'Settings?',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 5 },
        copies: { type: 'integer', minimum: 1 },
        ratio: { type: 'number' },
        urgent: { type: 'boolean' },
        size: {
          type: 'string',
          oneOf: [
            { const: 's', title: 'Small' },
            { const: 'l', title: 'Large' },
          ],
        },
      },
      required: ['name'],
    },
  },
};

const refusal = (body: Record<string, unknown>, of: InputRequest = question) => {
  try {
    operatorAnswer(of, body);
  } catch (error) {
    if (error instanceof ConsoleRefusal) return `${error.status} ${error.message}`;
    throw error;
  }
  return 'accepted';
};

describe("an operator's answer", () => {
  it('is the elicitation result the form describes, of the schema’s types', () => {
    const content = { name: 'Ada', copies: 2, ratio: 0.5, urgent: false, size: 'l' };
    expect(operatorAnswer(question, { key: 'k', action: 'accept', content })).toEqual({
      result: { action: 'accept', content },
    });
    expect(operatorAnswer(question, { action: 'decline', content: { ignored: 1 } })).toEqual({
      result: { action: 'decline' },
    });
  });

  it('is refused, with the reason, when it does not fit the question', () => {
    expect(refusal({ action: 'accept', content: {} })).toBe('400 name is required');
    expect(refusal({ action: 'accept', content: { name: 'toolong' } })).toBe('400 name takes at most 5 characters');
    expect(refusal({ action: 'accept', content: { name: 'a', copies: 1.5 } })).toBe(
      '400 copies must be a whole number',
    );
    expect(refusal({ action: 'accept', content: { name: 'a', copies: 0 } })).toBe('400 copies must be ≥ 1');
    expect(refusal({ action: 'accept', content: { name: 'a', urgent: 'yes' } })).toBe(
      '400 urgent must be true or false',
    );
    expect(refusal({ action: 'accept', content: { name: 'a', size: 'Large' } })).toBe('400 size must be one of s, l');
    expect(refusal({ action: 'accept', content: { name: 'a', __proto__x: 1, toString: 'x' } })).toBe(
      '400 the question has no field __proto__x',
    );
    expect(refusal({ action: 'maybe' })).toBe('400 action must be accept, decline or cancel');
    expect(refusal({ key: 'k' }, { method: 'roots/list', params: {} })).toBe(
      '400 a roots/list request cannot be answered from the console',
    );
  });

  it('to a sampling request is an assistant message holding the text', () => {
    const sampling = { method: 'sampling/createMessage', params: { messages: [] } };
    expect(operatorAnswer(sampling, { text: 'Yes.' })).toEqual({
      result: { role: 'assistant', content: { type: 'text', text: 'Yes.' }, model: 'operator', stopReason: 'endTurn' },
    });
    expect(refusal({ text: '  ' }, sampling)).toBe('400 the answer needs a text');
  });
});

describe('a CSV cell', () => {
  it('is quoted when it must be, and never starts a spreadsheet formula', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a, "b"')).toBe('"a, ""b"""');
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('@me')).toBe("'@me");
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
  });
});
