/**
 * How the console's script shows what a task holds as a person reads it: a tool result's text as text (its line
 * breaks kept, never parsed as HTML), images as images (raster types from base64 only), anything else as indented
 * JSON that folds; copy buttons. Joined after appJs.ts.
 */
export const CONTENT_VIEW_JS: string = `
// ---- content ----------------------------------------------------------------------------------------------------

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
// A data: URL bigger than this is shown as JSON (its size) instead of decoded by the page.
const MAX_IMAGE_CHARS = 4 * 1024 * 1024;

function copyButton(text, what) {
  return el('button', {
    type: 'button', class: 'copy', title: 'Copy the ' + what, 'aria-label': 'Copy the ' + what, text: 'copy',
    onclick: (event) => {
      event.preventDefault();
      event.stopPropagation();
      const button = event.currentTarget;
      navigator.clipboard.writeText(text).then(
        () => { button.textContent = 'copied'; live.textContent = 'copied the ' + what; setTimeout(() => { button.textContent = 'copy'; }, 1500); },
        () => { live.textContent = 'the browser refused to copy'; },
      );
    },
  });
}

// Indented JSON in a fold, open unless asked otherwise; a copy button beside its summary.
function jsonBlock(value, title, open) {
  const text = JSON.stringify(value, null, 2);
  return el('details', { class: 'json', open: open !== false }, [
    el('summary', {}, [title || 'JSON', copyButton(text, (title || 'JSON').toLowerCase())]),
    el('pre', { text: text === undefined ? 'null' : text }),
  ]);
}

function contentItem(item) {
  if (item && item.type === 'text' && typeof item.text === 'string') {
    return el('div', { class: 'content-text' }, [copyButton(item.text, 'text'), el('pre', { class: 'text', text: item.text })]);
  }
  if (item && item.type === 'image' && IMAGE_TYPES.includes(item.mimeType) && typeof item.data === 'string' &&
      item.data.length <= MAX_IMAGE_CHARS && /^[A-Za-z0-9+/]*={0,2}$/.test(item.data)) {
    return el('img', { class: 'content-image', alt: 'An image of the result (' + item.mimeType + ')', src: 'data:' + item.mimeType + ';base64,' + item.data });
  }
  if (item && item.type === 'resource' && item.resource && typeof item.resource.text === 'string') {
    return el('div', { class: 'content-text' }, [el('p', { class: 'skip', text: String(item.resource.uri || 'resource') }), el('pre', { class: 'text', text: item.resource.text })]);
  }
  return jsonBlock(item, item && typeof item.type === 'string' ? item.type : 'content');
}

// A tool result: its content items as they read, structured content as JSON, and the raw result folded away.
function contentView(result) {
  const parts = [];
  if (result && result.isError === true) parts.push(el('p', { class: 'error', text: 'The tool reported an error.' }));
  if (result && Array.isArray(result.content)) for (const item of result.content) parts.push(contentItem(item));
  if (result && result.structuredContent !== undefined) parts.push(jsonBlock(result.structuredContent, 'Structured content'));
  parts.push(jsonBlock(result, 'Raw result', parts.length === 0));
  return parts;
}

function errorView(error) {
  return [
    el('p', {}, [el('strong', { class: 'error', text: String(error && error.message) }), ' (code ' + String(error && error.code) + ')']),
    error && error.data !== undefined ? jsonBlock(error.data, 'Data') : null,
  ];
}
`;
