import { everythingStdio } from './helpers/everything.js';
import { everythingSuite } from './suites/everythingSuite.js';

everythingSuite('stdio', async () => ({ target: everythingStdio(), stop: async () => undefined }));
