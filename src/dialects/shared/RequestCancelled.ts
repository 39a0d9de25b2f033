/**
 * The abort reason when the requestor cancelled the request itself (`notifications/cancelled`), as opposed to its
 * connection going away: only the former cancels a SEP-1686 task.
 */
export class RequestCancelled extends Error {
  constructor(reason?: string) {
    super(reason ?? 'cancelled by the requestor');
  }
}
