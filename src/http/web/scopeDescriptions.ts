import type { Scope } from '../../domain/scopes.ts';

/** Plain descriptions shown on the consent screen and the API key form (the spec's scope table). */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'analytics:read': 'Read search and AI-visibility analytics.',
  'opportunities:read': 'Read AI and search content opportunities.',
  'articles:read': 'List and read articles and their limits.',
  'articles:write': 'Create and edit articles and run SEO refreshes.',
  'agents:read': 'Read agent configurations and runs.',
  'agents:write': 'Turn agents on or off and trigger agent runs.',
  'inbox:read': "Read Outreach Agent inbox conversations and messages. This includes your contacts' personal data (names, email addresses, message contents).",
  'inbox:write': 'Reply to threads, change conversation status, take over from the agent, mark messages read and push forwarded messages into the inbox.',
  'webhooks:read': 'List webhook subscriptions.',
  'webhooks:write': 'Create, update and delete webhook subscriptions.',
};
