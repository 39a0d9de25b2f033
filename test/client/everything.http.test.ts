import { startEverythingHttp } from './helpers/everything.js';
import { everythingSuite } from './suites/everythingSuite.js';

everythingSuite('Streamable HTTP', async () => {
  const server = await startEverythingHttp();
  return { target: { url: server.url }, stop: () => server.stop() };
});
