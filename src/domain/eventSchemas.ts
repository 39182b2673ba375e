import { z } from 'zod';
import type { AgentEvent } from './agents.ts';
import { AGENT_KEYS, REPLY_TONES } from './agents.ts';
import { ARTICLE_FORMATS, type ArticleEvent } from './article.ts';
import { type AgentRunEvent, type AgentRunLedgerEvent, RUN_FAILURE_REASONS, RUN_TRIGGERS } from './agentRun.ts';
import type { OpportunityProposal } from './agentWork.ts';
import type { CreditsEvent } from './credits.ts';
import { SKIP_REASONS } from './aiPause.ts';
import type { ApiKeyEvent } from './apiKey.ts';
import { AGENT_SKIP_REASONS, CONVERSATION_STATUSES, type ConversationEvent } from './conversation.ts';
import type { DashboardSessionEvent } from './dashboardSession.ts';
import { WEBHOOK_EVENT_TYPES } from './eventCatalog.ts';
import type { IngestionEvent } from './ingestion.ts';
import { TOKEN_ENDPOINT_AUTH_METHODS, type OAuthClientEvent } from './oauthClient.ts';
import type { OAuthGrantEvent } from './oauthGrant.ts';
import type { OutreachEvent } from './outreachEvents.ts';
import { SCOPES } from './scopes.ts';
import { CHECK_FAILURE_REASONS, type SendingDomainVerificationEvent } from './sendingDomainVerification.ts';
import { PLANS, type SiteEvent } from './site.ts';
import type { SuppressionEvent } from './suppression.ts';
import { BILLING_STATUSES, ROLES, type TeamEvent } from './team.ts';
import type { UserEmailEvent } from './userEmail.ts';
import type { WebhookDeliveryEvent } from './webhookDelivery.ts';
import type { WebhookSubscriptionEvent } from './webhookSubscription.ts';
import { PROSPECT_SKIP_REASONS, type ProspectEvent } from './prospects.ts';
import type { SecretKeyEvent } from './secretKey.ts';

/**
 * The shape of every stored event's data, one zod schema per event type. The store hands out
 * `RecordedEvent`s with `data: unknown`; `parseEvent` (lib/domainEvent.ts) checks them against
 * these before a decider, projection or processor sees a typed event. Each group is checked at
 * compile time to be exactly its union's data (neither looser nor stricter).
 */

export interface AnyEvent {
  type: string;
  data: unknown;
}
export type DataOf<E extends AnyEvent, K extends E['type']> = Extract<E, { type: K }>['data'];
export type EventSchemas<E extends AnyEvent> = { readonly [K in E['type']]: z.ZodType<DataOf<E, K>> };

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Mismatched<E extends AnyEvent, S> = {
  [K in E['type']]: K extends keyof S ? (S[K] extends z.ZodType ? (Same<z.output<S[K]>, DataOf<E, K>> extends true ? never : K) : K) : K;
}[E['type']];

/** A group of schemas that must match its event union exactly: a mismatch names the event type in the compile error. */
const schemasOf =
  <E extends AnyEvent>() =>
  <S extends EventSchemas<E>>(schemas: S & Record<Mismatched<E, S>, 'schema differs from the event type'>): EventSchemas<E> =>
    schemas;

const str = z.string();
const nullableStr = z.string().nullable();
const strings = z.array(z.string());

const outreachBase = { siteId: str, teamId: str, occurredAt: z.number() };
const entrySource = z.enum(['forwarded_actionable', 'forwarded_unactionable', 'direct_inbound_external', 'outbound_pitch']);
const skipReason = z.enum(SKIP_REASONS);

export const teamEventSchemas = schemasOf<TeamEvent>()({
  TeamCreated: z.object({ teamId: str, name: str, createdAt: str }),
  TeamBillingStatusChanged: z.object({ teamId: str, billingStatus: z.enum(BILLING_STATUSES), changedAt: str }),
  UserAdded: z.object({ teamId: str, userId: str, email: str, role: z.enum(ROLES), passwordHash: nullableStr, addedAt: str }),
  UserRemoved: z.object({ teamId: str, userId: str, email: str, removedAt: str }),
  UserRoleChanged: z.object({ teamId: str, userId: str, role: z.enum(ROLES), previousRole: z.enum(ROLES), changedAt: str }),
  UserPasswordChanged: z.object({ teamId: str, userId: str, passwordHash: nullableStr, changedAt: str }),
  UserSignedOutEverywhere: z.object({ teamId: str, userId: str, signedOutAt: str }),
  UserInvited: z.object({ teamId: str, invitationId: str, email: str, role: z.enum(ROLES), codeHash: str, invitedBy: nullableStr, expiresAt: str, invitedAt: str }),
  InvitationCancelled: z.object({ teamId: str, invitationId: str, cancelledAt: str }),
  InvitationAccepted: z.object({ teamId: str, invitationId: str, userId: str, acceptedAt: str }),
});

const siteSettings = z.object({
  plan: z.enum(PLANS),
  licensed: z.boolean(),
  sendingDomainVerified: z.boolean(),
  aiCredits: z.number(),
  dailyIngestionCap: z.number(),
  dailyExtractionCap: z.number(),
});
export const siteEventSchemas = schemasOf<SiteEvent>()({
  SiteCreated: siteSettings.extend({ siteId: str, teamId: str, domain: str, forwardingToken: str, createdAt: str }),
  SiteSettingsChanged: z.object({ siteId: str, changes: siteSettings.partial(), changedAt: str }),
  SiteWebhooksSwitched: z.object({ siteId: str, enabled: z.boolean(), switchedAt: str }),
});

export const apiKeyEventSchemas = schemasOf<ApiKeyEvent>()({
  ApiKeyCreated: z.object({ apiKeyId: str, teamId: str, name: str, scopes: z.array(z.enum(SCOPES)), siteId: nullableStr, keyHash: str, createdAt: str }),
  ApiKeyRevoked: z.object({ apiKeyId: str, teamId: str, revokedAt: str }),
  ApiKeyUsed: z.object({ apiKeyId: str, usedAt: str }),
});

export const userEmailEventSchemas = schemasOf<UserEmailEvent>()({
  UserEmailClaimed: z.object({ email: str, userId: str, teamId: str, claimedAt: str }),
  UserEmailReleased: z.object({ email: str, userId: str, reason: str, releasedAt: str }),
});

export const dashboardSessionEventSchemas = schemasOf<DashboardSessionEvent>()({
  DashboardSessionStarted: z.object({ sessionId: str, sessionHash: str, userId: str, teamId: str, credential: str.optional(), expiresAt: str, startedAt: str }),
  DashboardSessionEnded: z.object({ sessionId: str, sessionHash: str, userId: str, endedAt: str }),
});

const agentSettings = z.object({
  active: z.boolean(),
  autoReply: z.boolean(),
  senderName: nullableStr,
  signature: nullableStr,
  tone: z.enum(REPLY_TONES),
  declineReplies: z.boolean(),
  cadenceHours: z.number().nullable(),
  workSettings: z.record(z.string(), z.unknown()),
});
export const agentEventSchemas = schemasOf<AgentEvent>()({
  AgentConfigured: z.object({ siteId: str, agentKey: z.enum(AGENT_KEYS), changes: agentSettings.partial(), configuredAt: str }),
});

export const articleEventSchemas = schemasOf<ArticleEvent>()({
  ArticleUpserted: z.object({
    articleId: str,
    siteId: str,
    teamId: str,
    siteDomain: str,
    url: str,
    title: str,
    format: z.enum(ARTICLE_FORMATS),
    body: str,
    publishedAt: nullableStr,
    updatedAt: nullableStr,
    created: z.boolean(),
    upsertedAt: str,
  }),
  ArticleDeleted: z.object({ articleId: str, siteId: str, teamId: str, url: str, deletedAt: str }),
});

export const creditsEventSchemas = schemasOf<CreditsEvent>()({
  CreditsGranted: z.object({ teamId: str, amount: z.number(), note: nullableStr, grantedAt: str }),
  CreditsDebited: z.object({ teamId: str, siteId: str, runId: str, amount: z.number(), debitedAt: str }),
});

const nullableNumber = z.number().nullable();
/** Each agent's proposal, as stored on its run and shown as the opportunity's `details`. */
export const opportunityProposalSchema: z.ZodType<OpportunityProposal> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('interlinking'), sourceArticleId: str, sourceUrl: str, anchor: str, targetArticleId: str, targetUrl: str, sentence: str }),
  z.object({ kind: z.literal('article_boost'), articleId: str, url: str, reasons: z.array(z.enum(['stale', 'thin', 'poorly_linked'])), detail: str }),
  z.object({ kind: z.literal('article_creation'), topic: str, keywords: strings, rationale: str }),
  z.object({ kind: z.literal('ai_prompt'), question: str, articleId: nullableStr, url: nullableStr, rationale: str, originalQuestion: str.optional() }),
  z.object({
    kind: z.literal('site_performance'),
    url: str,
    problems: z.array(z.enum(['broken', 'slow', 'redirected', 'untitled', 'unreachable'])),
    status: nullableNumber,
    durationMs: nullableNumber,
    location: nullableStr,
    detail: str,
  }),
  z.object({ kind: z.literal('outreach'), prospectUrl: str, contactEmail: str, conversationId: str, subject: str, opportunityId: str, offeredUrl: nullableStr }),
]);

const runRef = { runId: str, siteId: str, teamId: str, agentKey: z.enum(AGENT_KEYS) };
export const agentRunLedgerEventSchemas = schemasOf<AgentRunLedgerEvent>()({
  AgentRunQueued: z.object({ ...runRef, trigger: z.enum(RUN_TRIGGERS), requestedBy: nullableStr, queuedAt: str }),
  AgentRunLedgerClosed: z.object({ siteId: str, hour: z.number(), closedAt: str }),
});
export const agentRunEventSchemas = schemasOf<AgentRunEvent>()({
  AgentRunStarted: z.object({ ...runRef, attempt: z.number(), workerId: str, leaseExpiresAt: str, startedAt: str }),
  AgentRunLeaseRenewed: z.object({ runId: str, attempt: z.number(), workerId: str, leaseExpiresAt: str, renewedAt: str }),
  AgentRunReleased: z.object({ runId: str, attempt: z.number(), workerId: str, releasedAt: str }),
  OpportunityProposed: z.object({ ...runRef, opportunityId: str, proposal: opportunityProposalSchema, proposedAt: str }),
  AgentRunSucceeded: z.object({
    ...runRef,
    attempt: z.number(),
    counts: z.record(z.string(), z.number()),
    opportunityIds: strings,
    creditsUsed: z.number(),
    succeededAt: str,
  }),
  AgentRunFailed: z.object({ ...runRef, attempt: z.number(), reason: z.enum(RUN_FAILURE_REASONS), detail: str, failedAt: str }),
});

export const suppressionEventSchemas = schemasOf<SuppressionEvent>()({
  ContactSuppressed: z.object({ ...outreachBase, email: str, reason: str, source: str, upgraded: z.boolean() }),
  ContactUnsuppressed: z.object({ ...outreachBase, email: str, source: str }),
});

export const sendingDomainVerificationEventSchemas = schemasOf<SendingDomainVerificationEvent>()({
  SendingDomainTokenIssued: z.object({ siteId: str, domain: str, token: str, recordName: str, recordValue: str, issuedAt: str }),
  SendingDomainVerified: z.object({ siteId: str, domain: str, method: z.literal('dns'), verifiedAt: str }),
  SendingDomainCheckFailed: z.object({ siteId: str, domain: str, reason: z.enum(CHECK_FAILURE_REASONS), checkedAt: str }),
});

const subscriptionFields = {
  subscriptionId: str,
  teamId: str,
  siteId: str,
  label: str,
  url: str,
  eventTypes: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  secretPrefix: str,
  sealedSecret: str,
  createdByOauthClientId: nullableStr,
};
export const webhookSubscriptionEventSchemas = schemasOf<WebhookSubscriptionEvent>()({
  SubscriptionCreated: z.object({ ...subscriptionFields, createdAt: str }),
  SubscriptionUpdated: z.object({ subscriptionId: str, siteId: str, label: str, url: str, eventTypes: z.array(z.enum(WEBHOOK_EVENT_TYPES)), updatedAt: str }),
  SubscriptionSecretRotated: z.object({
    subscriptionId: str,
    siteId: str,
    secretPrefix: str,
    sealedSecret: str,
    previousSealedSecret: nullableStr,
    previousSecretExpiresAt: nullableStr,
    rotatedAt: str,
  }),
  SubscriptionDeleted: z.object({ subscriptionId: str, siteId: str, deletedAt: str }),
});

const deliveryStatus = z.union([
  z.literal(['ok', 'timeout', 'network_error', 'tls_error', 'blocked_destination']),
  z.templateLiteral(['http_', z.number()]),
]);
export const webhookDeliveryEventSchemas = schemasOf<WebhookDeliveryEvent>()({
  DeliveryScheduled: z.object({
    subscriptionId: str,
    deliveryId: str,
    sourcePosition: str,
    eventType: z.enum(WEBHOOK_EVENT_TYPES),
    webhookId: str,
    body: str,
    scheduledAt: str,
    dueAt: z.number(),
    workerId: str,
  }),
  DeliveryAttempted: z.object({
    subscriptionId: str,
    deliveryId: str,
    attempt: z.number(),
    status: deliveryStatus,
    statusCode: z.number().nullable(),
    error: nullableStr,
    durationMs: z.number(),
    attemptedAt: str,
    nextAttemptAt: z.number().nullable(),
    workerId: str,
  }),
  DeliverySucceeded: z.object({ subscriptionId: str, deliveryId: str, attempts: z.number(), deliveredAt: str }),
  DeliveryFailed: z.object({
    subscriptionId: str,
    deliveryId: str,
    attempts: z.number(),
    status: deliveryStatus,
    failedAt: str,
    consecutiveFailures: z.number(),
  }),
  DeliveryAbandoned: z.object({ subscriptionId: str, deliveryId: str, reason: z.enum(['subscription_disabled', 'event_type_removed']), abandonedAt: str }),
  SubscriptionAutoDisabled: z.object({ subscriptionId: str, consecutiveFailures: z.number(), disabledAt: str }),
});

export const oauthClientEventSchemas = schemasOf<OAuthClientEvent>()({
  OAuthClientRegistered: z.object({
    clientId: str,
    teamId: str,
    name: str,
    redirectUris: strings,
    tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
    secretHash: nullableStr,
    registeredBy: str,
    registeredAt: str,
  }),
  OAuthClientRegisteredDynamically: z.object({ clientId: str, name: str, redirectUris: strings, clientUri: nullableStr, registeredAt: str }),
  OAuthClientSecretRotated: z.object({ clientId: str, teamId: str, secretHash: str, rotatedBy: str, rotatedAt: str }),
  OAuthClientDeleted: z.object({ clientId: str, teamId: str, deletedBy: str, deletedAt: str }),
});

const issuedToken = { tokenId: str, tokenHash: str, expiresAt: str };
export const oauthGrantEventSchemas = schemasOf<OAuthGrantEvent>()({
  // resource (RFC 8707) arrived with the MCP endpoint: grants and tokens recorded before it name none.
  ConsentGiven: z.object({ grantId: str, clientId: str, teamId: str, userId: str, siteIds: strings, scopes: strings, resource: nullableStr.default(null), givenAt: str }),
  AuthorizationCodeIssued: z.object({
    grantId: str,
    clientId: str,
    codeHash: str,
    redirectUri: str,
    redirectUriGiven: z.literal(false).optional(),
    codeChallenge: str,
    codeChallengeMethod: z.literal('S256'),
    expiresAt: str,
    issuedAt: str,
  }),
  AuthorizationCodeRedeemed: z.object({ grantId: str, clientId: str, redeemedAt: str }),
  AccessTokenIssued: z.object({
    ...issuedToken,
    grantId: str,
    clientId: str,
    teamId: str,
    siteIds: strings,
    scopes: strings,
    resource: nullableStr.default(null),
    issuedAt: str,
  }),
  RefreshTokenIssued: z.object({ ...issuedToken, grantId: str, clientId: str, scopes: strings, issuedAt: str }),
  RefreshTokenRotated: z.object({ grantId: str, tokenId: str, replacedBy: str, rotatedAt: str }),
  TokenRevoked: z.object({
    grantId: str,
    tokenId: str,
    tokenKind: z.literal('access_token'),
    reason: z.literal('revoked_by_client'),
    revokedAt: str,
  }),
  GrantRevoked: z.object({
    grantId: str,
    clientId: str,
    teamId: str,
    reason: z.enum(['authorization_code_reused', 'refresh_token_reused', 'revoked_by_client', 'client_deleted', 'revoked_by_team', 'user_removed', 'user_demoted']),
    tokenIds: strings,
    revokedAt: str,
  }),
});

const ask = z.object({ targetUrl: str, anchorText: nullableStr, suggestedSentence: nullableStr, sourceUrl: nullableStr });
const ingestionResult = z.object({
  ok: z.literal(true),
  siteId: str,
  conversationIds: strings,
  opportunityIds: strings,
  entrySource,
  aiPaused: z.boolean(),
  skipReason: skipReason.optional(),
});
export const ingestionEventSchemas = schemasOf<IngestionEvent>()({
  ConversationOpened: z.object({
    ...outreachBase,
    conversationId: str,
    opportunityId: str,
    entrySource,
    status: z.literal('open'),
    contactEmail: str,
    contactName: nullableStr,
    subject: str,
    ask: ask.nullable(),
    aiPaused: z.boolean(),
    skipReason: skipReason.nullable(),
  }),
  OpportunityCreated: z.object({ ...outreachBase, opportunityId: str, conversationId: str, entrySource }),
  MessageIngested: z.object({
    ...outreachBase,
    ingestionId: str,
    messageId: str,
    conversationIds: strings,
    opportunityIds: strings,
    entrySource,
    direction: z.literal('inbound'),
    senderType: z.literal('recipient'),
    channel: z.enum(['api', 'smtp']),
    threaded: z.boolean(),
    extractor: nullableStr,
    aiPaused: z.boolean(),
    skipReason: skipReason.nullable(),
    externalMessageId: nullableStr,
    from: str,
    fromName: nullableStr,
    subject: str,
    bodyText: str,
    bodyHtml: nullableStr,
    inReplyTo: nullableStr,
    references: nullableStr,
    forwarded: z.boolean().optional(),
  }),
  MessageReceived: z.object({ ...outreachBase, conversationId: str, opportunityId: str, messageId: str, entrySource }),
  AgentDispatchRequested: z.object({ ...outreachBase, dispatchId: str, conversationId: str, messageId: str, task: z.literal('triage_and_reply') }),
  IngestionRecorded: z.object({ ...outreachBase, ingestionId: str, status: z.literal(201), response: ingestionResult, requestHash: str.optional() }),
});

const conversationBase = { ...outreachBase, conversationId: str };
const terminalStatus = z.enum(['resolved', 'declined', 'awaiting_human']);
const triageOutcome = z.enum(['accept', 'decline', 'needs_human', 'opt_out']);
const senderType = z.enum(['agent', 'user']);
const address = z.object({ name: nullableStr, address: str });
export const conversationEventSchemas = schemasOf<ConversationEvent>()({
  OutboundConversationStarted: z.object({
    ...conversationBase,
    opportunityId: str,
    contactEmail: str,
    contactName: nullableStr,
    subject: str,
    prospectUrl: str,
    offeredUrl: nullableStr,
    runId: str,
  }),
  ConversationReopened: z.object({ ...conversationBase, oldStatus: terminalStatus, reason: z.enum(['prospect_replied', 'user']) }),
  AgentTriaged: z.object({ ...conversationBase, dispatchId: str, inboundMessageId: str, outcome: triageOutcome, classifier: str, reasons: strings }),
  AgentSkipped: z.object({ ...conversationBase, dispatchId: str, inboundMessageId: str, reason: z.enum(AGENT_SKIP_REASONS) }),
  ReplyDrafted: z.object({
    ...conversationBase,
    messageId: str,
    rfcMessageId: str,
    from: address,
    to: address,
    subject: str,
    bodyText: str,
    inReplyTo: nullableStr,
    references: strings,
    returnPath: nullableStr,
    drafter: str,
    draftSha256: str,
    answersFor: strings.optional(),
    dispatchId: nullableStr,
    direction: z.literal('outbound'),
    senderType,
    triage: z.union([triageOutcome, z.literal('manual'), z.literal('pitch')]),
  }),
  ReplySendAttempted: z.object({ ...conversationBase, messageId: str, attempt: z.number() }),
  ReplySendFailed: z.object({ ...conversationBase, messageId: str, attempt: z.number(), error: str, permanent: z.boolean(), retryAt: z.number().nullable() }),
  ReplySent: z.object({
    ...conversationBase,
    messageId: str,
    mailProviderMessageId: str,
    triage: str,
    autoResolved: z.boolean(),
    sendOutcome: z.literal('sent'),
    senderType,
    attempt: z.number(),
  }),
  ConversationStatusChanged: z.object({
    ...conversationBase,
    oldStatus: z.enum(CONVERSATION_STATUSES),
    newStatus: terminalStatus,
    resolvedBy: z.enum(['agent', 'user']),
    resolutionOutcome: str,
  }),
  ConversationTakenOver: z.object({ ...conversationBase, by: nullableStr }),
  ConversationHandedBack: z.object({ ...conversationBase, by: nullableStr }),
  ConversationMarkedRead: z.object({ ...conversationBase, upToMessageId: nullableStr, by: nullableStr }),
  ConversationMarkedUnread: z.object({ ...conversationBase, by: nullableStr }),
});

const prospect = z.object({ url: str, name: nullableStr, notes: nullableStr });
const prospectBase = { siteId: str, teamId: str, occurredAt: z.number() };
export const prospectEventSchemas = schemasOf<ProspectEvent>()({
  ProspectsImported: z.object({ ...prospectBase, importId: str, prospects: z.array(prospect) }),
  ProspectPitched: z.object({ ...prospectBase, prospectUrl: str, contactEmail: str, conversationId: str, runId: str }),
  ProspectSkipped: z.object({ ...prospectBase, prospectUrl: str, reason: z.enum(PROSPECT_SKIP_REASONS), detail: str, runId: str }),
});

/**
 * The webhook engine's view of the five outreach facts: only the fields an envelope needs, so it
 * reads them from whichever stream they were appended to.
 */
export const secretKeyEventSchemas = schemasOf<SecretKeyEvent>()({
  SecretKeyProbeRecorded: z.object({ sealedProbe: str, occurredAt: z.number() }),
});

export const outreachEventSchemas = schemasOf<OutreachEvent>()({
  OpportunityCreated: ingestionEventSchemas.OpportunityCreated,
  MessageReceived: ingestionEventSchemas.MessageReceived,
  ReplySent: z.object({ ...conversationBase, messageId: str, mailProviderMessageId: str, triage: str, autoResolved: z.boolean(), sendOutcome: str, senderType: senderType.optional() }),
  ConversationStatusChanged: z.object({ ...conversationBase, oldStatus: str, newStatus: terminalStatus, resolvedBy: str, resolutionOutcome: str }),
  ContactSuppressed: suppressionEventSchemas.ContactSuppressed,
});

/** Every event the service stores. (OutreachEvent is not here: it is a view of some of these.) */
export type DomainEvent =
  | TeamEvent
  | SiteEvent
  | ApiKeyEvent
  | UserEmailEvent
  | DashboardSessionEvent
  | AgentEvent
  | SuppressionEvent
  | SendingDomainVerificationEvent
  | WebhookSubscriptionEvent
  | WebhookDeliveryEvent
  | OAuthClientEvent
  | OAuthGrantEvent
  | IngestionEvent
  | ConversationEvent
  | ProspectEvent
  | ArticleEvent
  | CreditsEvent
  | AgentRunLedgerEvent
  | AgentRunEvent
  | SecretKeyEvent;

/** Event type → schema of its data, for every stored event type. */
export const domainEventSchemas: EventSchemas<DomainEvent> = {
  ...teamEventSchemas,
  ...siteEventSchemas,
  ...apiKeyEventSchemas,
  ...userEmailEventSchemas,
  ...dashboardSessionEventSchemas,
  ...agentEventSchemas,
  ...suppressionEventSchemas,
  ...sendingDomainVerificationEventSchemas,
  ...webhookSubscriptionEventSchemas,
  ...webhookDeliveryEventSchemas,
  ...oauthClientEventSchemas,
  ...oauthGrantEventSchemas,
  ...ingestionEventSchemas,
  ...conversationEventSchemas,
  ...prospectEventSchemas,
  ...articleEventSchemas,
  ...creditsEventSchemas,
  ...agentRunLedgerEventSchemas,
  ...agentRunEventSchemas,
  ...secretKeyEventSchemas,
};
