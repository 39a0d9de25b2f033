import { describeEntry } from '../describeEntry.js';
import { APP_CSS } from './appCss.js';
import { APP_JS } from './appJs.js';
import { INDEX_HTML } from './indexHtml.js';

/** The page embeds describeEntry's own source, so the browser words timeline entries as the command line does. */
const SCRIPT = `const describeEntry = ${describeEntry.toString()};\n${APP_JS}`;

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
