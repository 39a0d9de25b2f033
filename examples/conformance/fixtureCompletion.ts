import type { Server } from '@modelcontextprotocol/server';

import { FIXTURE_PROMPTS } from './fixturePrompts.js';
import { FIXTURE_RESOURCE_TEMPLATE } from './fixtureResources.js';

/** Adds completion/complete: the suggestions of a prompt argument or of the template's `{id}` that start as typed. */
export function registerFixtureCompletion(server: Server): void {
  server.registerCapabilities({ completions: {} });
  server.setRequestHandler('completion/complete', (request) => {
    const { ref, argument } = request.params;
    const candidates =
      ref.type === 'ref/prompt'
        ? (FIXTURE_PROMPTS[ref.name]?.arguments.find((a) => a.name === argument.name)?.suggestions ?? [])
        : ref.uri === FIXTURE_RESOURCE_TEMPLATE.uriTemplate && argument.name === 'id'
          ? FIXTURE_RESOURCE_TEMPLATE.ids
          : [];
    const values = candidates.filter((value) => value.startsWith(argument.value));
    return { completion: { values, total: values.length, hasMore: false } };
  });
}
