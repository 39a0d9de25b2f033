// The smallest valid media the content scenarios accept: the suites check type, mimeType and that data is present.

/** A 1×1 blue PNG, base64. */
export const FIXTURE_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mOQm/AfAAJ9Aa5PDvJhAAAAAElFTkSuQmCC';

/** One millisecond of 8 kHz 8-bit mono silence as a WAV file, base64. */
export const FIXTURE_WAV_BASE64 = 'UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==';
