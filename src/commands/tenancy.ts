import { apiKeyDecider, apiKeyStream } from '../domain/apiKey.ts';
import { isEmailAddress, normaliseEmail } from '../domain/email.ts';
import type { Scope } from '../domain/scopes.ts';
import { type Plan, type SiteEvent, type SiteSettings, siteDecider, siteStream } from '../domain/site.ts';
import { type BillingStatus, type Role, type TeamCommand, TeamRuleError, teamDecider, teamStream } from '../domain/team.ts';
import { EmailTakenError, userEmailDecider, userEmailStream } from '../domain/userEmail.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import type { CommandContext } from './context.ts';
import { generateApiKey, hashPassword, randomToken, sha256Hex } from './credentials.ts';
import { handleCommand } from './handleCommand.ts';
import { eventsOfTypes } from '../lib/eventsOfTypes.ts';
import { toDomainEvent } from '../lib/parseEvent.ts';
import { DISPLAY_NAME_MESSAGE, isDisplayName } from '../domain/text.ts';

/** Raised for operator mistakes (unknown team, duplicate email...); the CLI prints the message. */
export class TenancyError extends Error {}

/** The address signs in a user already (of this team or another): one address, one user across the service. */
export class EmailInUseError extends TenancyError {}

/** A team rule refused (last owner, not a member...): the caller's mistake, said in the rule's words. */
export const asTenancyError = (error: unknown): unknown => (error instanceof TeamRuleError ? new TenancyError(error.message) : error);

/** A command on the team's stream; a team rule's refusal comes out as a TenancyError in the rule's words. */
export const decideOnTeam = (ctx: CommandContext, teamId: string, command: TeamCommand) =>
  handleCommand(ctx, teamStream(teamId), teamDecider, command).catch((error: unknown) => {
    throw asTenancyError(error);
  });

/** An operator's input, checked before anything is recorded: the event log keeps what it is given. */
export function checkUserInput(email: string, password: string | undefined): void {
  if (!isEmailAddress(email)) throw new TenancyError(`not an email address: ${email}`);
  checkPassword(password);
}

/** An empty password is none (an empty OUTREACH_OWNER_PASSWORD): the user then has no dashboard sign-in. */
export function checkPassword(password: string | undefined): void {
  if (password && password.length < MIN_PASSWORD_LENGTH) throw new TenancyError(`a dashboard password must have at least ${MIN_PASSWORD_LENGTH} characters`);
}

/** NIST SP 800-63B's floor for a password the user chose. */
const MIN_PASSWORD_LENGTH = 8;

/** A new team's input, checked before anything is opened or recorded (the CLI checks it before it opens the stores). */
export function checkTeamInput(input: { name: string; ownerEmail: string; ownerPassword?: string }): { name: string; email: string } {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 120) throw new TenancyError('the team name must be 1 to 120 characters');
  const email = normaliseEmail(input.ownerEmail);
  checkUserInput(email, input.ownerPassword);
  return { name, email };
}

export async function createTeam(ctx: CommandContext, input: { name: string; ownerEmail: string; ownerPassword?: string }) {
  const { name, email } = checkTeamInput(input);
  const teamId = ctx.newId();
  const ownerUserId = ctx.newId();
  await claimEmail(ctx, { email, userId: ownerUserId, teamId });
  const result = await releasingOnFailure(ctx, { email, userId: ownerUserId }, async () => {
    const passwordHash = input.ownerPassword ? await hashPassword(input.ownerPassword) : null;
    return handleCommand(ctx, teamStream(teamId), teamDecider, {
      type: 'CreateTeam',
      data: { teamId, name, owner: { userId: ownerUserId, email, passwordHash }, now: ctx.clock.now().toISOString() },
    });
  });
  return { teamId, ownerUserId, position: result.position };
}

export async function addUser(ctx: CommandContext, input: { teamId: string; email: string; role: Role; password?: string; byOwner?: string }) {
  const email = normaliseEmail(input.email);
  checkUserInput(email, input.password);
  await requireTeam(ctx, input.teamId);
  const userId = ctx.newId();
  await claimEmail(ctx, { email, userId, teamId: input.teamId });
  const result = await releasingOnFailure(ctx, { email, userId }, async () => {
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    return decideOnTeam(ctx, input.teamId, {
      type: 'AddUser',
      data: { teamId: input.teamId, userId, email, role: input.role, passwordHash, byOwner: input.byOwner, now: ctx.clock.now().toISOString() },
    });
  });
  return { userId, position: result.position };
}

export async function setTeamBillingStatus(ctx: CommandContext, input: { teamId: string; billingStatus: BillingStatus }) {
  await requireTeam(ctx, input.teamId);
  const result = await handleCommand(ctx, teamStream(input.teamId), teamDecider, {
    type: 'SetTeamBillingStatus',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position };
}

/**
 * A team's new site; refused when the team has a site for that domain already (a provisioning script
 * run twice would otherwise give the domain two inboxes and two forwarding addresses). Read from the
 * log's `SiteCreated` events, so a site created a moment ago by another command counts; two creations
 * of one domain at the same instant can both pass (an operator's command, not a client's).
 */
export async function createSite(ctx: CommandContext, input: { teamId: string; domain: string; plan: Plan }, mailDomain: string) {
  await requireTeam(ctx, input.teamId);
  const domain = input.domain.toLowerCase();
  const existing = await siteOfTeamFor(ctx, input.teamId, domain);
  if (existing) throw new TenancyError(`team ${input.teamId} has a site for ${domain} already: ${existing}`);
  const siteId = ctx.newId();
  const forwardingToken = randomToken(12);
  const result = await handleCommand(ctx, siteStream(siteId), siteDecider, {
    type: 'CreateSite',
    data: { siteId, teamId: input.teamId, domain, plan: input.plan, forwardingToken, now: ctx.clock.now().toISOString() },
  });
  return { siteId, forwardingAddress: forwardingAddress(forwardingToken, mailDomain), position: result.position };
}

/** The id of the team's site for `domain`, if it has one. */
async function siteOfTeamFor(ctx: Pick<CommandContext, 'events'>, teamId: string, domain: string): Promise<string | null> {
  for await (const recorded of eventsOfTypes(ctx.events, ['SiteCreated'])) {
    const event = toDomainEvent(recorded);
    if (event?.type === 'SiteCreated' && event.data.teamId === teamId && event.data.domain === domain) return event.data.siteId;
  }
  return null;
}

export const forwardingAddress = (token: string, mailDomain: string) => `forward+${token}@${mailDomain}`;

export async function changeSiteSettings(ctx: CommandContext, input: { siteId: string; changes: Partial<SiteSettings> }) {
  await requireSite(ctx, input.siteId);
  const result = await handleCommand(ctx, siteStream(input.siteId), siteDecider, {
    type: 'ChangeSiteSettings',
    data: { siteId: input.siteId, changes: input.changes, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position };
}

/** Turns the site's outbound webhooks on or off; events that happen while off are never delivered. */
export async function switchSiteWebhooks(ctx: CommandContext, input: { siteId: string; enabled: boolean }) {
  await requireSite(ctx, input.siteId);
  const result = await handleCommand(ctx, siteStream(input.siteId), siteDecider, {
    type: 'SwitchSiteWebhooks',
    data: { siteId: input.siteId, enabled: input.enabled, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position };
}

/** The dashboard's rule, for every caller (the CLI too, before it opens the stores): a name to recognise the key by, and a scope. */
export function checkApiKeyInput(input: { name: string; scopes: readonly Scope[] }): string {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 120) throw new TenancyError('the key name must be 1 to 120 characters');
  if (!isDisplayName(name)) throw new TenancyError(`the key name ${DISPLAY_NAME_MESSAGE}`);
  if (input.scopes.length === 0) throw new TenancyError('give the key one or more scopes');
  return name;
}

/** Creates an API key; the key itself is returned once and only its SHA-256 hash is stored. */
export async function createApiKey(ctx: CommandContext, input: { teamId: string; name: string; scopes: Scope[]; siteId: string | null }) {
  const name = checkApiKeyInput(input);
  await requireTeam(ctx, input.teamId);
  if (input.siteId) {
    const site = await requireSite(ctx, input.siteId);
    if (site.teamId !== input.teamId) throw new TenancyError(`site ${input.siteId} does not belong to team ${input.teamId}`);
  }
  const apiKeyId = ctx.newId();
  const key = generateApiKey();
  const result = await handleCommand(ctx, apiKeyStream(apiKeyId), apiKeyDecider, {
    type: 'CreateApiKey',
    data: { apiKeyId, ...input, name, scopes: [...new Set(input.scopes)], keyHash: sha256Hex(key), now: ctx.clock.now().toISOString() },
  });
  return { id: apiKeyId, key, position: result.position };
}

export async function revokeApiKey(ctx: CommandContext, input: { apiKeyId: string }) {
  if ((await ctx.events.readStream(apiKeyStream(input.apiKeyId))).length === 0) throw new TenancyError(`API key ${input.apiKeyId} not found`);
  const result = await handleCommand(ctx, apiKeyStream(input.apiKeyId), apiKeyDecider, {
    type: 'RevokeApiKey',
    data: { apiKeyId: input.apiKeyId, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position };
}

export async function recordApiKeyUse(ctx: CommandContext, apiKeyId: string) {
  return handleCommand(ctx, apiKeyStream(apiKeyId), apiKeyDecider, {
    type: 'RecordApiKeyUse',
    data: { apiKeyId, now: ctx.clock.now().toISOString() },
  });
}

/**
 * Claims the address before the user is added. If adding then fails, releasingOnFailure gives the
 * address back. Only a process that dies between the two steps leaves a claim with a user that
 * never existed; that address needs an operator, the price of never having two.
 */
export async function claimEmail(ctx: CommandContext, claim: { email: string; userId: string; teamId: string }) {
  try {
    await handleCommand(ctx, userEmailStream(sha256Hex(claim.email)), userEmailDecider, {
      type: 'ClaimUserEmail',
      data: { ...claim, now: ctx.clock.now().toISOString() },
    });
  } catch (error) {
    if (error instanceof EmailTakenError) throw new EmailInUseError(error.message);
    throw error;
  }
}

/** Runs the step after the claim; if it throws, the claim is released (a compensating event) and the error rethrown. */
export async function releasingOnFailure<T>(ctx: CommandContext, claim: { email: string; userId: string }, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await handleCommand(ctx, userEmailStream(sha256Hex(claim.email)), userEmailDecider, {
      type: 'ReleaseUserEmail',
      data: { ...claim, reason: error instanceof Error ? error.message.slice(0, 200) : 'sign-up failed', now: ctx.clock.now().toISOString() },
    });
    throw error;
  }
}

/** TenancyError when no team has this id (an operator's typo). */
export async function requireTeam(ctx: Pick<CommandContext, 'events'>, teamId: string): Promise<void> {
  const stream = await ctx.events.readStream(teamStream(teamId));
  if (stream.length === 0) throw new TenancyError(`team ${teamId} not found`);
}

async function requireSite(ctx: CommandContext, siteId: string): Promise<{ teamId: string }> {
  const stream = await ctx.events.readStream(siteStream(siteId));
  const created = stream[0] as (RecordedEvent & SiteEvent) | undefined;
  if (created?.type !== 'SiteCreated') throw new TenancyError(`site ${siteId} not found`);
  return { teamId: created.data.teamId };
}
