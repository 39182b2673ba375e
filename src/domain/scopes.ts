/** The spec's scope table. */
export const SCOPES = [
  'analytics:read',
  'opportunities:read',
  'articles:read',
  'articles:write',
  'agents:read',
  'agents:write',
  'inbox:read',
  'inbox:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
