import { agentTools } from './agents.ts';
import { articleTools } from './articles.ts';
import { inboxTools } from './inbox.ts';
import { opportunityTools } from './opportunities.ts';
import type { McpTool } from './tool.ts';

/** Every MCP tool, one file per area: a new area is one more file of `defineTool(...)` entries spread in here. */
export const MCP_TOOLS: readonly McpTool[] = [...inboxTools, ...opportunityTools, ...agentTools, ...articleTools];
