/**
 * No-reply senders: automated mailboxes nobody reads. The agent never answers them.
 * Matched on the local part (before any `+tag`), case-insensitively, ignoring `.`, `-` and `_`.
 */
const NO_REPLY_LOCAL_PARTS = new Set([
  'noreply',
  'donotreply',
  'dontreply',
  'mailerdaemon',
  'postmaster',
  'bounce',
  'bounces',
  'notifications',
  'notification',
  'autoreply',
  'autoresponder',
  'daemon',
]);

export function isNoReplyAddress(email: string): boolean {
  const at = email.lastIndexOf('@');
  const local = (at === -1 ? email : email.slice(0, at)).toLowerCase().split('+')[0]!;
  const squashed = local.replace(/[._-]/g, '');
  if (NO_REPLY_LOCAL_PARTS.has(squashed)) return true;
  // noreply-123, no-reply.billing, mailer-daemon-eu: a no-reply word followed by a machine suffix.
  return /^(noreply|donotreply|dontreply|mailerdaemon)/.test(squashed) || /^bounces?[0-9]+$/.test(squashed);
}
