import { describeEntry } from '../describeEntry.js';
import { APP_CSS } from './appCss.js';
import { ANSWER_FORM_JS } from './answerFormJs.js';
import { APP_JS } from './appJs.js';
import { CONTENT_VIEW_JS } from './contentViewJs.js';
import { INDEX_HTML } from './indexHtml.js';
import { OWNERS_JS } from './ownersJs.js';
import { SUBSCRIPTIONS_JS } from './subscriptionsJs.js';
import { TASK_ACTIVITY_JS } from './taskActivityJs.js';
import { TASK_PAGE_JS } from './taskPageJs.js';

/**
 * One script: the page embeds describeEntry's own source, so the browser words timeline entries as the command line
 * does; the parts are function declarations of one module, so their order does not matter.
 */
const SCRIPT = [
  `const describeEntry = ${describeEntry.toString()};`,
  APP_JS,
  CONTENT_VIEW_JS,
  ANSWER_FORM_JS,
  TASK_PAGE_JS,
  TASK_ACTIVITY_JS,
  OWNERS_JS,
  SUBSCRIPTIONS_JS,
].join('\n');

const ASSETS: Record<string, { body: string; type: string }> = {
  'index.html': { body: INDEX_HTML, type: 'text/html; charset=utf-8' },
  'app.css': { body: APP_CSS, type: 'text/css; charset=utf-8' },
  'app.js': { body: SCRIPT, type: 'text/javascript; charset=utf-8' },
};

/** One of the console's assets, served by the package itself (nothing is fetched from elsewhere). */
export function consoleAsset(name: string): { body: string; type: string } {
  const asset = ASSETS[name];
  if (!asset) throw new Error(`no console asset ${name}`);
  return asset;
}
