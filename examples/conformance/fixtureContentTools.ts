import { FIXTURE_PNG_BASE64, FIXTURE_WAV_BASE64 } from './fixtureMedia.js';
import { object, type FixtureTool } from './FixtureTool.js';

/** Tools returning each kind of content block the `tools-call-*` scenarios check (image, audio, resource, a mix). */
export const FIXTURE_CONTENT_TOOLS: Record<string, FixtureTool> = {
  test_image_content: {
    description: 'Returns a PNG image.',
    inputSchema: object({}),
    run: async () => ({ content: [{ type: 'image', data: FIXTURE_PNG_BASE64, mimeType: 'image/png' }] }),
  },
  test_audio_content: {
    description: 'Returns a WAV clip.',
    inputSchema: object({}),
    run: async () => ({ content: [{ type: 'audio', data: FIXTURE_WAV_BASE64, mimeType: 'audio/wav' }] }),
  },
  test_embedded_resource: {
    description: 'Returns an embedded text resource.',
    inputSchema: object({}),
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },
  test_multiple_content_types: {
    description: 'Returns text, an image and an embedded JSON resource in one result.',
    inputSchema: object({}),
    run: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: FIXTURE_PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
};
