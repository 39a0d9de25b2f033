import { TaskClient, textOf } from 'mcp-tasks/client';

const client = await TaskClient.connect(
  { url: 'http://127.0.0.1:3000/mcp' },
  { store: '.mcp-tasks/handles.json' }, // handles survive a restart of this host
);
const task = await client.callTool('slow_echo', { text: 'hello' });
for await (const snapshot of task.updates()) console.log(snapshot.status, snapshot.statusMessage ?? '');
console.log(textOf(await task.result()));
await client.close();
