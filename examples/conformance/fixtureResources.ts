import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';

import { FIXTURE_PNG_BASE64 } from './fixtureMedia.js';

type Contents = { text: string } | { blob: string };

interface StaticResource {
  name: string;
  description: string;
  mimeType: string;
  contents: Contents;
}

/** The direct resources the `resources-*` scenarios read, by URI. */
const STATIC_RESOURCES: Record<string, StaticResource> = {
  'test://static-text': {
    name: 'static-text',
    description: 'A fixed text.',
    mimeType: 'text/plain',
    contents: { text: 'This is the content of the static text resource.' },
  },
  'test://static-binary': {
    name: 'static-binary',
    description: 'A fixed PNG image.',
    mimeType: 'image/png',
    contents: { blob: FIXTURE_PNG_BASE64 },
  },
  'test://watched-resource': {
    name: 'watched-resource',
    description: 'A resource to subscribe to.',
    mimeType: 'text/plain',
    contents: { text: 'Watched resource content' },
  },
};

/** The resource template, with the ids completion/complete suggests for its `{id}`. */
export const FIXTURE_RESOURCE_TEMPLATE = {
  uriTemplate: 'test://template/{id}/data',
  name: 'template-data',
  description: 'JSON data for an id.',
  mimeType: 'application/json',
  ids: ['1', '2', '123'],
};
const TEMPLATE_URI = /^test:\/\/template\/([^/]+)\/data$/;

function read(uri: string) {
  const resource = STATIC_RESOURCES[uri];
  if (resource) return { uri, mimeType: resource.mimeType, ...resource.contents };
  const id = TEMPLATE_URI.exec(uri)?.[1];
  if (id !== undefined) {
    const value = decodeURIComponent(id);
    return {
      uri,
      mimeType: FIXTURE_RESOURCE_TEMPLATE.mimeType,
      text: JSON.stringify({ id: value, templateTest: true, data: `Data for ID: ${value}` }),
    };
  }
  // SEP-2164: an unknown URI is an Invalid Params error naming the URI, never an empty result.
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Resource not found', { uri });
}

/** Adds the fixture resources, their template and subscriptions (2025 wire) to a low-level server. */
export function registerFixtureResources(server: Server): void {
  server.registerCapabilities({ resources: { subscribe: true } });
  server.setRequestHandler('resources/list', () => ({
    resources: Object.entries(STATIC_RESOURCES).map(([uri, { name, description, mimeType }]) => ({
      uri,
      name,
      description,
      mimeType,
    })),
  }));
  server.setRequestHandler('resources/templates/list', () => {
    const { uriTemplate, name, description, mimeType } = FIXTURE_RESOURCE_TEMPLATE;
    return { resourceTemplates: [{ uriTemplate, name, description, mimeType }] };
  });
  server.setRequestHandler('resources/read', (request) => ({ contents: [read(request.params.uri)] }));
  // The resources never change, so a subscription is only recorded: no notifications/resources/updated follows.
  const subscriptions = new Set<string>();
  server.setRequestHandler('resources/subscribe', (request) => {
    read(request.params.uri);
    subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
}
