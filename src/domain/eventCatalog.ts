/** The outbound webhook event catalog: the allowed values of eventTypes. */
export const WEBHOOK_EVENT_TYPES = [
  'outreach.opportunity_created',
  'outreach.message_received',
  'outreach.reply_sent',
  'outreach.conversation_status_changed',
  'outreach.contact_suppressed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
