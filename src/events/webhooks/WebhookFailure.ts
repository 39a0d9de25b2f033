/** Why a delivery or a handshake failed: a category only, never the endpoint's answer (spec V94, V106). */
export type WebhookFailure =
  'connection_refused' | 'timeout' | 'tls_error' | 'http_4xx' | 'http_5xx' | 'challenge_failed';
