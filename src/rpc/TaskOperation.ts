/** What the caller was doing, so error messages read like the spec's examples. */
export type TaskOperation = 'retrieve' | 'cancel' | 'update' | 'delete' | 'list' | 'create';
