import { z } from 'zod';
import type { Scope } from '../domain/scopes.ts';
import type { GrantTool, McpTool } from './tools/tool.ts';

/** What tools/list answers for one tool. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations: McpTool['annotations'] & { title: string };
}

/**
 * The tools, indexed once at start: the tools/list answer (JSON Schemas of the zod inputs) is
 * computed here, not per request, because every request gets a fresh server in stateless mode.
 */
export class ToolRegistry {
  readonly listing: ToolListing[];
  /** Every scope some tool needs: what an MCP client should ask for. */
  readonly scopes: Scope[];
  private readonly byName: Map<string, McpTool | GrantTool>;

  constructor(siteTools: readonly McpTool[], grantTools: readonly GrantTool[] = []) {
    const tools = [...grantTools, ...siteTools];
    this.byName = new Map(tools.map((t) => [t.name, t]));
    if (this.byName.size !== tools.length) throw new Error('two MCP tools share a name');
    this.listing = tools.map((t) => {
      const { $schema: _schema, ...schema } = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
      return { name: t.name, title: t.title, description: t.description, inputSchema: { ...schema, type: 'object' }, annotations: { title: t.title, ...t.annotations } };
    });
    this.scopes = [...new Set(siteTools.map((t) => t.scope))];
  }

  get(name: string): McpTool | GrantTool | undefined {
    return this.byName.get(name);
  }
}
