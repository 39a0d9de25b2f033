import type { ChildProcess } from 'node:child_process';

/** The URL a spawned fixture or demo server announces on stderr ("listening on http://…"); rejects if it exits first. */
export async function listeningUrl(child: ChildProcess): Promise<string> {
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited (${code}): ${seen}`)));
  });
  child.stderr?.resume();
  return url;
}
