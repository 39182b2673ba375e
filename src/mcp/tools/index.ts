import { agentTools } from './agents.ts';
import { articleTools } from './articles.ts';
import { inboxTools } from './inbox.ts';
import { opportunityTools } from './opportunities.ts';
import { grantTools } from './sites.ts';
import type { GrantTool, McpTool } from './tool.ts';

/** Every MCP tool, one file per area: a new area is one more file of `defineTool(...)` entries spread in here. */
export const MCP_TOOLS: readonly McpTool[] = [...inboxTools, ...opportunityTools, ...agentTools, ...articleTools];

/** The tools about the grant itself (`list_sites`), which take no site. */
export const GRANT_TOOLS: readonly GrantTool[] = grantTools;
