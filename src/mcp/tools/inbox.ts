import { z } from 'zod';
import { emailFilter } from '../../domain/email.ts';
import { isoDateTime, utcBound } from '../../http/pagination.ts';
import { CONVERSATION_STATUSES } from '../../domain/conversation.ts';
import { IDEMPOTENCY_KEY_SHAPE } from '../../domain/ingestion.ts';
import { replyBody, statusBody } from '../../http/routes/conversationActions.ts';
import { changeStatusAsPerson, findConversation, replyAsPerson, runSimpleAction, type SimpleAction } from '../../http/views/conversationActions.ts';
import { conversationDetail, conversationsPage } from '../../http/views/inbox.ts';
import { type McpTool, defineTool } from './tool.ts';
import { pageInput } from './paging.ts';

const conversationId = z.string().min(1).max(100).describe('The conversation id (from list_conversations)');
const bound = (v: string | undefined, side: 'after' | 'before') => (v === undefined ? undefined : utcBound(v, side));

/** The Outreach Agent inbox, as the REST inbox API (/api/v1/sites/{siteId}/outreach/conversations…). */
export const inboxTools: McpTool[] = [
  defineTool({
    name: 'list_conversations',
    title: 'List inbox conversations',
    description:
      'Lists the Outreach Agent inbox conversations of a site, newest first, with contact, subject, status, unread flag and who handles it (agent or a person). Contains contact personal data. Pass nextCursor back as cursor for the next page.',
    scope: 'inbox:read',
    input: {
      ...pageInput,
      status: z.enum(CONVERSATION_STATUSES).optional(),
      unread: z.boolean().optional(),
      aiPaused: z.boolean().optional().describe('true: conversations the agent does not answer'),
      contactEmail: emailFilter.optional().describe('an email address, in any case'),
      createdAfter: isoDateTime.optional(),
      createdBefore: isoDateTime.optional(),
      updatedAfter: isoDateTime.optional().describe('updatedAt: the last message, status change, triage or take-over'),
      updatedBefore: isoDateTime.optional(),
    },
    run: ({ siteId: _siteId, createdAfter, createdBefore, updatedAfter, updatedBefore, ...query }, { app, site }) =>
      conversationsPage(app.readModels, site.id, {
        ...query,
        createdAfter: bound(createdAfter, 'after'),
        createdBefore: bound(createdBefore, 'before'),
        updatedAfter: bound(updatedAfter, 'after'),
        updatedBefore: bound(updatedBefore, 'before'),
      }),
  }),
  defineTool({
    name: 'get_conversation',
    title: 'Read a conversation',
    description: 'Gets one conversation with all its messages (oldest first), its link opportunity (null without the opportunities:read scope), status history and last triage.',
    scope: 'inbox:read',
    input: { conversationId },
    run: ({ conversationId: id }, { app, site, credential }) => conversationDetail(app.readModels, site.id, id, credential),
  }),
  defineTool({
    name: 'reply_to_conversation',
    title: 'Reply to a conversation',
    description:
      'Sends a reply as a person from the site\'s agent address, in the thread of the latest inbound message. Give idempotencyKey to make a retry answer the first reply instead of sending twice.',
    scope: 'inbox:write',
    write: true,
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
    input: {
      conversationId,
      ...replyBody.shape,
      idempotencyKey: z.string().regex(IDEMPOTENCY_KEY_SHAPE, 'must be 1 to 128 characters from letters, digits, ".", "_", "-" and ":"').optional(),
    },
    run: async ({ conversationId: id, text, subject, idempotencyKey }, { app, site, credential }) => {
      const outcome = await replyAsPerson(app, { ref: await findConversation(app, site.id, id), site, credential, text, subject, idempotencyKey });
      return { message: outcome.message, conversation: outcome.conversation };
    },
  }),
  defineTool({
    name: 'change_conversation_status',
    title: 'Change a conversation\'s status',
    description: `Sets the status of a conversation as a person: ${CONVERSATION_STATUSES.join(', ')} (open re-opens it). An optional resolutionOutcome (for example won or lost) goes with the status_changed webhook; it is refused with open, which emits no webhook.`,
    scope: 'inbox:write',
    write: true,
    annotations: { destructiveHint: false, idempotentHint: true },
    input: { conversationId, ...statusBody.shape },
    run: async ({ conversationId: id, status, resolutionOutcome }, { app, site, credential }) =>
      changeStatusAsPerson(app, { ref: await findConversation(app, site.id, id), status, resolutionOutcome, by: credential.id }),
  }),
  ...(
    [
      ['take_over_conversation', 'takeover', 'Take over a conversation', 'Takes a conversation over from the Outreach Agent: the agent stops acting on it until it is handed back.'],
      ['hand_back_conversation', 'handback', 'Hand a conversation back', 'Hands a conversation a person took over back to the Outreach Agent.'],
      ['mark_conversation_read', 'read', 'Mark a conversation read', 'Marks a conversation read up to its latest inbound message.'],
      ['mark_conversation_unread', 'unread', 'Mark a conversation unread', 'Marks a conversation unread.'],
    ] as const satisfies ReadonlyArray<readonly [string, SimpleAction, string, string]>
  ).map(([name, action, title, description]) =>
    defineTool({
      name,
      title,
      description,
      scope: 'inbox:write',
      write: true,
      annotations: { destructiveHint: false, idempotentHint: true },
      input: { conversationId },
      run: async ({ conversationId: id }, { app, site, credential }) => runSimpleAction(app, action, { ref: await findConversation(app, site.id, id), by: credential.id }),
    }),
  ),
];
