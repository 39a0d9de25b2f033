import type { Client, Tool } from '@modelcontextprotocol/client';
import * as z from 'zod';

/** `Tool.execution.taskSupport`; absent means `forbidden` (spec §1.3). */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

const ToolsPage = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string() })),
  nextCursor: z.string().optional(),
});

/** Pages a server may return before the listing is considered runaway. */
const MAX_PAGES = 64;

/** The server's tools, cached until the server says the list changed. */
export class ToolCatalog {
  private tools: Map<string, Tool> | undefined;

  constructor(private readonly client: Client) {}

  async list(): Promise<Tool[]> {
    return [...(await this.load()).values()];
  }

  /** The tool's declared task support; an unknown tool triggers one refresh before defaulting. */
  async taskSupport(name: string): Promise<TaskSupport> {
    let tool = (await this.load()).get(name);
    if (tool === undefined) {
      this.invalidate();
      tool = (await this.load()).get(name);
    }
    const support = tool?.execution?.taskSupport;
    return support === 'optional' || support === 'required' ? support : 'forbidden';
  }

  invalidate(): void {
    this.tools = undefined;
  }

  /**
   * `tools/list` as a plain request: on a resumed HTTP session the SDK client has no `initialize` result, and its
   * `listTools()` would answer an empty list for want of the tools capability.
   */
  private async load(): Promise<Map<string, Tool>> {
    if (this.tools === undefined) {
      const tools = new Map<string, Tool>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await this.client.request(
          { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
          ToolsPage,
        );
        for (const tool of result.tools) tools.set(tool.name, tool as unknown as Tool);
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      this.tools = tools;
    }
    return this.tools;
  }
}
