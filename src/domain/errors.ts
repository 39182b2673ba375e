/**
 * Every error the spec names, by what went wrong. The domain and the commands throw these; the HTTP
 * layer maps each code to its status and the code the client sees (one table, `http/errorHandler.ts`).
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'SITE_NOT_LICENSED'
  /** SITE_NOT_LICENSED where the refused work is paid for (ingestion's billing gate). */
  | 'PAYMENT_REQUIRED'
  | 'INSUFFICIENT_SCOPE'
  | 'SITE_NOT_FOUND'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'CONFLICT'
  | 'SUBSCRIPTION_LIMIT_REACHED'
  /** A site's articles are bounded in number and in bytes. */
  | 'ARTICLE_LIMIT_REACHED'
  /** An auto-disabled webhook subscription stays disabled: the owner creates a new one. */
  | 'SUBSCRIPTION_DISABLED'
  | 'IDEMPOTENCY_KEY_REUSED'
  /** A conversation action its current state refuses (ConversationRuleError's codes). */
  | 'CONVERSATION_TRANSITION_NOT_ALLOWED'
  | 'REPLY_IN_FLIGHT'
  | 'CONVERSATION_TAKEN_OVER'
  | 'CONVERSATION_NOT_TAKEN_OVER'
  | 'REPLY_NOT_PENDING'
  | 'CONTACT_SUPPRESSED'
  | 'SENDING_DOMAIN_UNVERIFIED'
  /** The agents API: the site's plan lacks automations (or Advanced for the Outreach Agent). */
  | 'PLAN_REQUIRED'
  /** The team's AI credit balance is spent (only while credit enforcement is on). */
  | 'INSUFFICIENT_CREDITS'
  /** An on-demand run of an agent that is turned off. */
  | 'AGENT_INACTIVE'
  /** An agent key that is not one of the six. */
  | 'AGENT_NOT_FOUND'
  /** A settings key the agent does not have. */
  | 'UNKNOWN_SETTING'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Whole seconds after which a retry may succeed (rate limits, unavailability); null when it would not. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

export const validationError = (message: string) => new ServiceError('VALIDATION_ERROR', message);
export const unauthorized = (message = 'Missing or invalid credentials.') => new ServiceError('UNAUTHORIZED', message);
export const insufficientScope = (scope: string) => new ServiceError('INSUFFICIENT_SCOPE', `This credential lacks the required scope ${scope}.`);
export const siteNotLicensed = (message = 'The site has no active licence.') => new ServiceError('SITE_NOT_LICENSED', message);
export const paymentRequired = (message: string) => new ServiceError('PAYMENT_REQUIRED', message);
export const siteNotFound = () => new ServiceError('SITE_NOT_FOUND', 'Site not found.');
export const notFound = (message = 'Not found.') => new ServiceError('NOT_FOUND', message);
export const rateLimited = (retryAfterSeconds: number, message = 'Rate limit exceeded.') =>
  new ServiceError('RATE_LIMITED', message, Math.max(1, Math.ceil(retryAfterSeconds)));
export const conflict = (message: string) => new ServiceError('CONFLICT', message);
export const serviceUnavailable = (message: string, retryAfterSeconds = 1) => new ServiceError('SERVICE_UNAVAILABLE', message, retryAfterSeconds);
export const subscriptionLimitReached = (limit: number) =>
  new ServiceError('SUBSCRIPTION_LIMIT_REACHED', `A site may have at most ${limit} webhook subscriptions; delete one before creating another.`);
export const articleLimitReached = (what: string) => new ServiceError('ARTICLE_LIMIT_REACHED', `${what}; delete articles before adding more.`);
export const subscriptionDisabled = () =>
  new ServiceError('SUBSCRIPTION_DISABLED', 'This webhook subscription was disabled after repeated delivery failures and stays disabled; create a new subscription.');
export const idempotencyKeyReused = () =>
  new ServiceError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different site or request body; use a new key for a new request.');
export const planRequired = (message: string) => new ServiceError('PLAN_REQUIRED', message);
/** Mail would leave from the site's domain, whose sending domain is not verified (a person's reply, an Outreach Agent run). */
export const sendingDomainUnverified = (message: string) => new ServiceError('SENDING_DOMAIN_UNVERIFIED', message);
export const insufficientCredits = (balance: number) =>
  new ServiceError('INSUFFICIENT_CREDITS', `The team's AI credit balance is ${balance}; agent runs need credits while credit enforcement is on.`);
export const agentInactive = (agentKey: string) => new ServiceError('AGENT_INACTIVE', `The agent ${agentKey} is not active on this site; activate it first.`);
export const agentNotFound = (agentKey: string) => new ServiceError('AGENT_NOT_FOUND', `Unknown agent key ${JSON.stringify(agentKey.slice(0, 100))}.`);
/** The first ten keys named (each cut at 100 characters), then how many more: 3,000 unknown keys made a 300 KB message. */
export const unknownSetting = (agentKey: string, keys: string[]) =>
  new ServiceError(
    'UNKNOWN_SETTING',
    `The agent ${agentKey} has no setting ${keys
      .slice(0, 10)
      .map((k) => JSON.stringify(k.slice(0, 100)))
      .join(', ')}${keys.length > 10 ? ` (and ${keys.length - 10} more)` : ''}.`,
  );
