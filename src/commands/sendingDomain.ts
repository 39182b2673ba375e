import {
  type SendingDomainCheckFailureReason,
  type SendingDomainVerificationEvent,
  type SendingDomainVerificationState,
  type TxtLookup,
  sendingDomainVerificationDecider,
  sendingDomainVerificationStream,
} from '../domain/sendingDomainVerification.ts';
import { siteStream } from '../domain/site.ts';
import { toDomainEvent } from '../lib/parseEvent.ts';
import type { DnsResolver } from '../ports/dnsResolver.ts';
import { aggregateStream } from './aggregateStream.ts';
import type { CommandContext } from './context.ts';
import { randomToken } from './credentials.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError, changeSiteSettings } from './tenancy.ts';

/** The TXT record an operator publishes to prove the site controls its sending domain. */
export interface SendingDomainRecord {
  siteId: string;
  domain: string;
  recordName: string;
  recordValue: string;
}

export type SendingDomainCheck =
  | { siteId: string; domain: string; recordName: string; verified: true; verifiedAt: string }
  | {
      siteId: string;
      domain: string;
      /** null when no token was ever issued (there is no record to look for). */
      recordName: string | null;
      verified: false;
      reason: SendingDomainCheckFailureReason;
      /** The resolver's error code for `dns_error` (ESERVFAIL, ETIMEOUT, ECONNREFUSED...). */
      dnsError?: string;
      checkedAt: string;
    };

/**
 * Issues the verification token and returns the record to publish. While a token is outstanding it is
 * returned again (so asking twice does not invalidate a record the operator has just created);
 * `renew: true` replaces it with a fresh one.
 */
export async function issueSendingDomainToken(
  ctx: CommandContext,
  input: { siteId: string; renew?: boolean },
): Promise<SendingDomainRecord & { issued: boolean }> {
  const domain = await siteDomain(ctx, input.siteId);
  const current = await verificationState(ctx, input.siteId);
  if (!input.renew && current.status === 'issued' && current.domain === domain) {
    return { siteId: input.siteId, domain, recordName: current.recordName, recordValue: current.recordValue, issued: false };
  }
  const { events } = await handleCommand(ctx, sendingDomainVerificationStream(input.siteId), sendingDomainVerificationDecider, {
    type: 'IssueVerificationToken',
    data: { siteId: input.siteId, domain, token: randomToken(16), now: ctx.clock.now().toISOString() },
  });
  const issued = events[0] as Extract<SendingDomainVerificationEvent, { type: 'SendingDomainTokenIssued' }>;
  return { siteId: input.siteId, domain, recordName: issued.data.recordName, recordValue: issued.data.recordValue, issued: true };
}

/**
 * Looks the TXT record up and records the outcome. On success the site's `sendingDomainVerified`
 * setting is set through the ordinary settings command. Every check appends an event (also a repeated
 * success), so a crash between the two appends is repaired by checking again.
 * A failed check leaves the setting as it is: the operator override keeps working.
 */
export async function verifySendingDomain(ctx: CommandContext, resolver: DnsResolver, input: { siteId: string }): Promise<SendingDomainCheck> {
  const { siteId } = input;
  const domain = await siteDomain(ctx, siteId);
  const state = await verificationState(ctx, siteId);
  const recordName = state.status === 'issued' && state.domain === domain ? state.recordName : null;
  const lookup: TxtLookup = recordName ? await lookUp(resolver, recordName) : { txtRecords: [] };
  const { events } = await handleCommand(ctx, sendingDomainVerificationStream(siteId), sendingDomainVerificationDecider, {
    type: 'CheckSendingDomain',
    data: { siteId, domain, now: ctx.clock.now().toISOString(), ...lookup },
  });
  const outcome = events[0]!;
  switch (outcome.type) {
    case 'SendingDomainVerified':
      await changeSiteSettings(ctx, { siteId, changes: { sendingDomainVerified: true } });
      return { siteId, domain, recordName: recordName!, verified: true, verifiedAt: outcome.data.verifiedAt };
    case 'SendingDomainCheckFailed':
      return {
        siteId,
        domain,
        recordName,
        verified: false,
        reason: outcome.data.reason,
        ...('dnsError' in lookup ? { dnsError: lookup.dnsError } : {}),
        checkedAt: outcome.data.checkedAt,
      };
    default:
      throw new Error(`unexpected outcome of a sending-domain check: ${outcome.type}`);
  }
}

async function lookUp(resolver: DnsResolver, name: string): Promise<TxtLookup> {
  try {
    return { txtRecords: await resolver.resolveTxt(name) };
  } catch (error) {
    return { dnsError: (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? String(error) };
  }
}

async function siteDomain(ctx: CommandContext, siteId: string): Promise<string> {
  const [first] = await ctx.events.readStream(siteStream(siteId));
  const created = first ? toDomainEvent(first) : null;
  if (created?.type !== 'SiteCreated') throw new TenancyError(`site ${siteId} not found`);
  return created.data.domain;
}

async function verificationState(ctx: CommandContext, siteId: string): Promise<SendingDomainVerificationState> {
  return (await aggregateStream(ctx.events, sendingDomainVerificationStream(siteId), sendingDomainVerificationDecider)).state;
}
