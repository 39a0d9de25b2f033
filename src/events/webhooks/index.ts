// Webhook delivery of the Events extension (EVENTS-SPEC §7, §13): what the events layer and the entry points use.
export { CallbackPolicy, type CallbackPolicyOptions } from './CallbackPolicy.js';
export { OutboxWebhookDeliveries, type OutboxWebhookDeliveriesOptions } from './OutboxWebhookDeliveries.js';
export type * from './WebhookDeliveries.js';
export { WebhookError, type WebhookErrorKind } from './WebhookError.js';
export type { WebhookFailure } from './WebhookFailure.js';
export { DEFAULT_WEBHOOK_LIMITS, type WebhookLimits } from './WebhookLimits.js';
export type { WebhookAttempt } from './WebhookSender.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifiedWebhook,
  type VerifyWebhookOptions,
  type WebhookHeaderSource,
} from './verifyWebhook.js';
export { generateWebhookSecret } from './webhookSecret.js';
