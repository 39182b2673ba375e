import { normaliseEmail } from '../domain/email.ts';
import { ServiceError, sendingDomainUnverified } from '../domain/errors.ts';
import { type AgentGateClosed, agentGate, agentsDecider, agentsStream, settingsOf } from '../domain/agents.ts';
import { siteDecider, siteStream } from '../domain/site.ts';
import { isSuppressed, suppressionDecider, suppressionStream } from '../domain/suppression.ts';
import { aggregateStream, aggregateStreamFolding } from './aggregateStream.ts';
import type { CommandContext } from './context.ts';

/** Why no mail may leave for `to` now; what the agent's triage checks, checked again by every send. */
export type MailRefusal = { reason: 'contact_suppressed' | 'sending_domain_unverified' | 'agent_paused'; detail: string };

/**
 * The last check before a mail leaves the site's domain, from the streams (a suppression or a
 * withdrawn verification recorded a moment ago counts): the contact is not on the team's suppression
 * list, and the site's sending domain is verified (unverified, the mail would spoof it). Null when it
 * may go. A person's reply, the agent's replies and pitches, and every retry pass it.
 *
 * `agent`: the Outreach Agent sends it (a `reply` or a cold `pitch`): the agent must still be active
 * on a licensed site whose plan has it, and for a reply its auto-reply on. Paused during its model
 * calls or between a reply's attempts, it sent anyway.
 */
export async function mailRefusal(
  ctx: Pick<CommandContext, 'events'>,
  input: { teamId: string; siteId: string; to: string; agent?: 'reply' | 'pitch' },
): Promise<MailRefusal | null> {
  // The team's list only grows with use: its fold is kept and carried on.
  const { state: suppressions } = await aggregateStreamFolding(ctx.events, suppressionStream(input.teamId), suppressionDecider);
  if (isSuppressed(suppressions, input.to)) {
    return { reason: 'contact_suppressed', detail: `the address is on the team's suppression list (${suppressions.get(normaliseEmail(input.to))})` };
  }
  const { state: site } = await aggregateStream(ctx.events, siteStream(input.siteId), siteDecider);
  if (site.status !== 'exists' || !site.settings.sendingDomainVerified) {
    return { reason: 'sending_domain_unverified', detail: "the site's sending domain is not verified" };
  }
  if (input.agent) {
    const { state: agents } = await aggregateStream(ctx.events, agentsStream(input.siteId), agentsDecider);
    const closed = agentGate(site.settings, settingsOf(agents, 'outreach'), 'outreach', input.agent === 'reply' ? 'reply' : 'run');
    if (closed) return { reason: 'agent_paused', detail: PAUSED[closed](site.settings.plan) };
  }
  return null;
}

const PAUSED: { readonly [K in AgentGateClosed]: (plan: string) => string } = {
  site_not_licensed: () => 'the site has no active licence',
  plan_excludes_agent: (plan) => `the site's plan (${plan}) has no Outreach Agent`,
  agent_inactive: () => 'the Outreach Agent is inactive',
  auto_reply_disabled: () => "the Outreach Agent's auto-reply is off",
};

/** A person's reply refused by the gate (which never asks about the agent for one): 409 with the reason's code. */
export function mailRefused(refusal: MailRefusal): ServiceError {
  return refusal.reason === 'contact_suppressed'
    ? new ServiceError('CONTACT_SUPPRESSED', `No mail is sent to this contact: ${refusal.detail}. Remove the address from the suppression list first if it is there in error.`)
    : sendingDomainUnverified("No mail is sent from this site's domain until its sending domain is verified (`outreach site verify-domain`).");
}
