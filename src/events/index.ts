// The Events extension's entry for the other layers (server): event types, poll / push / webhook serving from each
// task's event log.
export * from './EventCatalog.js';
export type { EventAccessRequest, EventAuthorizer } from './EventAccess.js';
export * from './EventsFront.js';
export * from './publishToWebhooks.js';
export * from './taskEventCursor.js';
export * from './taskEventOccurrence.js';
export * from './TaskEventSubscription.js';
export * from './WorkerEvents.js';
export type * from './webhooks/WebhookDeliveries.js';
export type { WebhookAttempt } from './webhooks/WebhookSender.js';
