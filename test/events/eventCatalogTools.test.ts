import { describe, expect, it } from 'vitest';

import { EventCatalog } from '../../src/events/EventCatalog.js';

const payloadSchema = { type: 'object', properties: { n: { type: 'integer' } } };

/** Which type a tool's tasks name as their event source (spec TS6): by a list of tools, or a predicate. */
describe('the tools of an event type', () => {
  it('a list names the type for those tools and is written as the descriptor’s hint; a predicate is asked, and not', () => {
    const asked: string[] = [];
    const catalog = new EventCatalog(
      [
        { name: 'com.example.listed', description: 'listed', payloadSchema, tools: ['build'] },
        {
          name: 'com.example.predicate',
          description: 'predicate',
          payloadSchema,
          tools: (tool) => {
            asked.push(tool);
            return tool.startsWith('deploy_');
          },
        },
      ],
      ['poll', 'push'],
    );
    expect(catalog.sourceFor('build')).toBe('com.example.listed');
    expect(catalog.sourceFor('deploy_eu')).toBe('com.example.predicate');
    expect(catalog.sourceFor('lint')).toBeUndefined();
    expect(asked).toEqual(expect.arrayContaining(['deploy_eu', 'lint']));
    expect(catalog.descriptor('com.example.listed')._meta).toEqual({ 'io.github.mcp-tasks/tools': ['build'] });
    expect(catalog.descriptor('com.example.predicate')._meta).toBeUndefined();
  });

  it('refuses a predicate on a type tied to no task, as it refuses a list', () => {
    const untasked = { name: 'com.example.untasked', description: 'u', payloadSchema, taskScoped: false };
    expect(() => new EventCatalog([{ ...untasked, tools: () => true }], ['poll'])).toThrow(TypeError);
  });
});
