import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Scope } from '../../domain/scopes.ts';
import type { Credential } from '../../http/credentials.ts';
import type { SiteDoc } from '../../readModels/sites.ts';

/** What a tool's handler is given: the app's ports, the caller's credential, and the site it named (already checked). */
export interface ToolContext {
  app: FastifyInstance;
  credential: Credential;
  site: SiteDoc;
}

/** Every tool works on one site; the grant's sites are enforced before the handler runs. */
export const siteIdInput = z.string().min(1).max(100).describe('The site to act on (its id, as in /api/v1/sites/{siteId}); the token must cover it.');

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** A tool as the MCP server serves it: its input is checked here, its handler sees typed input. */
export interface McpTool {
  siteBound: true;
  name: string;
  title: string;
  description: string;
  /** The scope the token needs; without it tools/call is 403 insufficient_scope. */
  scope: Scope;
  /** Writes count against the team's write rate tier, as the REST write routes do. */
  write: boolean;
  annotations: ToolAnnotations;
  /** A strict zod object; its JSON Schema is what tools/list shows. */
  input: z.ZodType<{ siteId: string }>;
  /**
   * Checks the REST route makes before it reads the body (the agents' plan gate), run on the raw
   * arguments once the site is checked and before the input is: the same refusal code as REST.
   */
  gate?: (args: Record<string, unknown>, site: SiteDoc) => void;
  run(input: unknown, ctx: ToolContext): Promise<Record<string, unknown>>;
}

/**
 * One tool: name, description, scope, zod input (with `siteId`) and a handler that calls the same
 * queries and commands as the REST routes. The input is parsed before `run`.
 */
export function defineTool<S extends z.ZodRawShape>(tool: {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  write?: boolean;
  annotations?: ToolAnnotations;
  input: S;
  /** Pass keys the shape does not name through to `run` (which answers them itself, as REST does), instead of refusing them. */
  otherKeys?: 'pass';
  gate?: McpTool['gate'];
  run(input: z.output<z.ZodObject<S & { siteId: typeof siteIdInput }>>, ctx: ToolContext): Promise<Record<string, unknown>>;
}): McpTool {
  const shape = z.object({ siteId: siteIdInput, ...tool.input });
  const input = tool.otherKeys === 'pass' ? shape.catchall(z.unknown()) : shape.strict();
  const write = tool.write ?? false;
  return {
    siteBound: true,
    name: tool.name,
    title: tool.title,
    description: `${tool.description} Needs scope ${tool.scope}.`,
    scope: tool.scope,
    write,
    annotations: { readOnlyHint: !write, openWorldHint: false, ...tool.annotations },
    input: input as unknown as McpTool['input'],
    ...(tool.gate ? { gate: tool.gate } : {}),
    run: (parsed, ctx) => tool.run(parsed as z.output<typeof input>, ctx),
  };
}

/**
 * A tool about the grant itself rather than one of its sites (no `siteId`, no scope: any token this
 * endpoint accepts may call it, as it reads only what the token already names).
 */
export interface GrantTool {
  siteBound: false;
  name: string;
  title: string;
  description: string;
  scope: null;
  write: false;
  annotations: ToolAnnotations;
  /** A strict zod object (no arguments); its JSON Schema is what tools/list shows. */
  input: z.ZodType<Record<string, never>>;
  run(ctx: Omit<ToolContext, 'site'>): Promise<Record<string, unknown>>;
}

export function defineGrantTool(tool: Pick<GrantTool, 'name' | 'title' | 'description' | 'run'>): GrantTool {
  return { ...tool, siteBound: false, scope: null, write: false, annotations: { readOnlyHint: true, openWorldHint: false }, input: z.strictObject({}) };
}
