import type { Client, Tool } from '@modelcontextprotocol/client';

/** `Tool.execution.taskSupport`; absent means `forbidden` (spec §1.3). */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

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

  private async load(): Promise<Map<string, Tool>> {
    if (this.tools === undefined) {
      const { tools } = await this.client.listTools();
      this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    }
    return this.tools;
  }
}
