import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';

import { WebhookError } from '../../src/events/webhooks/WebhookError.js';
import { signWebhook, webhookHeaders } from '../../src/events/webhooks/signWebhook.js';
import { verifyWebhook, WebhookVerificationError } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret, webhookKeyOf } from '../../src/events/webhooks/webhookSecret.js';

const body = JSON.stringify({
  eventId: 'task-1:0',
  name: 'stage',
  timestamp: '2026-12-05T08:00:00.000Z',
  data: { ü: 1 },
});

describe('webhook signatures (Standard Webhooks)', () => {
  // spec V84: the key is the decoded bytes after whsec_, the content id.timestamp.body, v1,<base64>.
  it('signs so that the standardwebhooks reference implementation verifies', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([webhookKeyOf(secret)], 'task-1:0', body, 'sub_abc');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(headers['x-mcp-subscription-id']).toBe('sub_abc'); // spec V83
    expect(headers['content-type']).toBe('application/json'); // spec V81
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('verifies what the reference implementation signs', () => {
    const secret = generateWebhookSecret(64);
    const wh = new Webhook(secret);
    const now = new Date();
    const headers = {
      'webhook-id': 'msg_gap_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': wh.sign('msg_gap_1', now, body),
    };
    const verified = verifyWebhook(headers, body, secret);
    expect(verified).toMatchObject({ id: 'msg_gap_1', payload: JSON.parse(body), subscriptionId: undefined });
    // Fetch API headers too.
    expect(verifyWebhook(new Headers(headers), Buffer.from(body), secret).id).toBe('msg_gap_1');
  });

  it('is not signed with the literal secret string (a known failure)', () => {
    const secret = generateWebhookSecret();
    const literal = signWebhook([Buffer.from(secret)], 'id', 1, body);
    expect(literal).not.toBe(signWebhook([webhookKeyOf(secret)], 'id', 1, body));
  });

  // spec V72: during a rotation both secrets sign; a receiver holding either verifies.
  it('dual-signs with two keys, space-separated, and either secret verifies', () => {
    const older = generateWebhookSecret();
    const newer = generateWebhookSecret();
    const headers = webhookHeaders([webhookKeyOf(newer), webhookKeyOf(older)], 'id-2', body, 'sub_x');
    expect((headers['webhook-signature'] ?? '').split(' ')).toHaveLength(2);
    expect(verifyWebhook(headers, body, older).id).toBe('id-2');
    expect(verifyWebhook(headers, body, newer).id).toBe('id-2');
    expect(new Webhook(older).verify(body, headers)).toBeTruthy();
    expect(() => verifyWebhook(headers, body, generateWebhookSecret())).toThrow(WebhookVerificationError);
  });

  it('refuses a tampered body, id or timestamp, and another secret', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([webhookKeyOf(secret)], 'id-3', body, 'sub_x');
    expect(() => verifyWebhook(headers, body.replace('"ü":1', '"ü":2'), secret)).toThrow('No matching signature');
    expect(() => verifyWebhook({ ...headers, 'webhook-id': 'id-4' }, body, secret)).toThrow('No matching signature');
    const shifted = String(Number(headers['webhook-timestamp']) + 1);
    expect(() => verifyWebhook({ ...headers, 'webhook-timestamp': shifted }, body, secret)).toThrow(
      'No matching signature',
    );
    expect(() => verifyWebhook(headers, body, generateWebhookSecret())).toThrow(WebhookVerificationError);
    // The reference implementation agrees.
    expect(() => new Webhook(secret).verify(body + ' ', headers)).toThrow();
  });

  it('refuses an old or future timestamp, even correctly signed (replay)', () => {
    const secret = generateWebhookSecret();
    const tenMinutesAgo = Date.now() - 600_000;
    const old = webhookHeaders([webhookKeyOf(secret)], 'id-5', body, 'sub_x', tenMinutesAgo);
    expect(() => verifyWebhook(old, body, secret)).toThrow('too old');
    expect(() => new Webhook(secret).verify(body, old)).toThrow();
    const future = webhookHeaders([webhookKeyOf(secret)], 'id-5', body, 'sub_x', Date.now() + 600_000);
    expect(() => verifyWebhook(future, body, secret)).toThrow('too new');
    // A wider tolerance accepts it.
    expect(verifyWebhook(old, body, secret, { toleranceSeconds: 700 }).id).toBe('id-5');
  });

  it('refuses missing headers, a non-numeric timestamp, unknown versions and a non-JSON body', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([webhookKeyOf(secret)], 'id-6', body, 'sub_x');
    expect(() => verifyWebhook({ ...headers, 'webhook-id': undefined }, body, secret)).toThrow('Missing');
    expect(() => verifyWebhook({ ...headers, 'webhook-timestamp': '1e9' }, body, secret)).toThrow('timestamp');
    const v2 = (headers['webhook-signature'] ?? '').replace('v1,', 'v2,');
    expect(() => verifyWebhook({ ...headers, 'webhook-signature': v2 }, body, secret)).toThrow('No matching');
    const text = 'not json';
    const signed = webhookHeaders([webhookKeyOf(secret)], 'id-7', text, 'sub_x');
    expect(() => verifyWebhook(signed, text, secret)).toThrow('not JSON');
  });

  // spec V61: whsec_ + base64 of 24–64 bytes; anything else is invalid_params.
  it('accepts only whsec_ secrets of 24–64 bytes', () => {
    expect(webhookKeyOf(generateWebhookSecret(24))).toHaveLength(24);
    expect(webhookKeyOf(generateWebhookSecret(64))).toHaveLength(64);
    for (const bad of [
      undefined,
      'secret',
      `whsec_${Buffer.alloc(23).toString('base64')}`,
      `whsec_${Buffer.alloc(65).toString('base64')}`,
      'whsec_not base64!',
      `sk_${Buffer.alloc(32).toString('base64')}`,
    ]) {
      expect(() => webhookKeyOf(bad)).toThrow(WebhookError);
      try {
        webhookKeyOf(bad);
      } catch (error) {
        expect((error as WebhookError).kind).toBe('invalid_params');
      }
    }
  });
});
