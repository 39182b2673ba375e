/**
 * Outreach Agent, outbound discovery: for each prospect the team imported and the agent has not
 * handled yet, find a contact address on the prospect's site (robots.txt respected), skip it when
 * suppressed, and send a cold pitch offering the site's best-matching article, within the daily
 * send cap. Each pitch opens a conversation (`OutboundConversationStarted`); the prospect's reply
 * threads into it through ingestion (In-Reply-To = the pitch's Message-Id).
 */
import { loadProspects, recordPitch, skipProspect } from '../commands/prospects.ts';
import { sendDraft } from '../commands/sendDraft.ts';
import { handleCommand } from '../commands/handleCommand.ts';
import { mailRefusal } from '../commands/mailGate.ts';
import { bounceAddress } from '../domain/bounceAddress.ts';
import type { ArticleInput, ProposalOf } from '../domain/agentWork.ts';
import { chooseContact, contactPageLinks, extractEmails, pageTopicText } from '../domain/agentWork/contactEmail.ts';
import { bestArticleFor, composePitch } from '../domain/agentWork/pitch.ts';
import { robotsAllows } from '../domain/agentWork/robots.ts';
import { conversationDecider, conversationStream } from '../domain/conversation.ts';
import { normaliseEmail } from '../domain/email.ts';
import { replyRfcMessageId, senderAddress, withDraftHash } from '../domain/outreachAgent.ts';
import { type Prospect, ProspectRuleError, type ProspectSkipReason, criteriaOf, fitsCriteria, pitchesOn } from '../domain/prospects.ts';
import { PageFetchError, type PageFetcher } from '../ports/pageFetcher.ts';
import { takeSendSlot } from '../ports/mailer.ts';
import { getSite } from '../readModels/sites.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Pages read per prospect: home, robots.txt, and up to this many contact/about pages. */
const MAX_CONTACT_PAGES = 3;
const MAX_PAGE_BYTES = 512 * 1024;
const MAX_HOME_REDIRECTS = 3;

export class OutreachRunError extends Error {}

export const outreachWork: AgentWork = async (run, deps) => {
  const settings = workSettingsOf('outreach', run.settings);
  const ctx = deps.commands;
  const site = await getSite(deps.readModels, run.siteId);
  if (!site) throw new OutreachRunError(`site ${run.siteId} not found`);
  // Pitches leave from the site's own domain: unverified, the mail would be spoofing it.
  if (!site.sendingDomainVerified) throw new OutreachRunError(`the sending domain ${site.domain} is not verified; no pitch was sent`);

  const state = await loadProspects(ctx, run.siteId);
  // Prospect criteria: only the prospects matching a keyword, at most maxProspectsPerRun of them.
  const criteria = criteriaOf(run.settings);
  const todo = [...state.prospects.values()].filter((p) => p.status === 'new' && fitsCriteria(p, criteria)).slice(0, settings.maxProspectsPerRun);
  const counts = { prospectsLooked: 0, pagesFetched: 0, pitchesSent: 0, sendFailures: 0, suppressed: 0, noContact: 0, robotsDisallowed: 0, unreachable: 0, notOnDomain: 0, alreadyPitched: 0, alreadyHandled: 0, capReached: 0 };
  const proposals: ProposalOf<'outreach'>[] = [];
  let sentToday = pitchesOn(state, ctx.clock.now().getTime());
  let articles: ArticleInput[] | null = null;

  const skip = async (prospect: Prospect, reason: ProspectSkipReason, detail: string) => {
    await skipProspect(ctx, { siteId: run.siteId, teamId: run.teamId, prospectUrl: prospect.url, reason, detail, runId: run.runId });
  };

  for (const prospect of todo) {
    if (deps.signal.aborted) break;
    if (sentToday >= settings.dailySendCap) {
      counts.capReached = 1;
      break;
    }
    const found = await discoverContact(deps.fetcher, prospect.url, deps.signal);
    // Cut short by the run's end (a stop, AGENT_RUN_MAX_MS): not unreachable, left for the next run.
    if (deps.signal.aborted) break;
    counts.prospectsLooked += 1;
    counts.pagesFetched += found.pagesFetched;
    if (found.outcome !== 'found') {
      const reason: ProspectSkipReason = found.outcome;
      counts[reason === 'robots_disallowed' ? 'robotsDisallowed' : reason === 'unreachable' ? 'unreachable' : 'noContact'] += 1;
      await skip(prospect, reason, found.detail);
      continue;
    }
    const { email, onDomain } = found.contact;
    if (settings.requireDomainEmail && !onDomain) {
      counts.notOnDomain += 1;
      await skip(prospect, 'not_on_prospect_domain', `${email} is not on the prospect's domain`);
      continue;
    }
    // One of the mailer's connections first (see Mailer.reserve): the gate, the pitch's record, its
    // claim, send and outcome run holding it, so nothing is recorded for a pitch that then waits (a
    // crash there would leave the prospect pitched without a conversation) and the gate is read last.
    articles ??= await deps.articles(run.siteId); // before: it reads every article's text
    const release = await takeSendSlot(deps.mailer, deps.signal);
    if (release === null) break; // the run's end (a stop, AGENT_RUN_MAX_MS): left for the next run
    try {
      // From the streams: a bounce or opt-out recorded a moment ago counts, and so does a withdrawn verification.
      const refused = await mailRefusal(ctx, { teamId: run.teamId, siteId: run.siteId, to: email, agent: 'pitch' });
      if (refused?.reason === 'sending_domain_unverified') throw new OutreachRunError(`the sending domain ${site.domain} is no longer verified; ${counts.pitchesSent} pitches were sent before`);
      if (refused?.reason === 'agent_paused') throw new OutreachRunError(`${refused.detail} now; ${counts.pitchesSent} pitches were sent before`);
      if (refused) {
        counts.suppressed += 1;
        await skip(prospect, 'contact_suppressed', `${email} is on the team's suppression list`);
        continue;
      }

      const article = bestArticleFor(`${prospect.name ?? ''}. ${prospect.notes ?? ''}. ${found.topicText}`, articles);
      const pitch = composePitch({ siteDomain: site.domain, prospectName: prospect.name, prospectUrl: prospect.url, article, senderName: settings.senderName, signature: settings.signature });
      const conversationId = ctx.newId();
      const opportunityId = ctx.newId();
      const messageId = ctx.newId();
      let recorded;
      try {
        recorded = await recordPitch(ctx, { siteId: run.siteId, teamId: run.teamId, prospectUrl: prospect.url, contactEmail: email, conversationId, runId: run.runId, dailySendCap: settings.dailySendCap });
      } catch (error) {
        // Another run of the same day used the rest of the cap.
        if (error instanceof ProspectRuleError && error.code === 'DAILY_SEND_CAP_REACHED') {
          counts.capReached = 1;
          break;
        }
        // The same person behind another prospect (another page of the site, a shared editor): one pitch is all they get.
        if (error instanceof ProspectRuleError && error.code === 'CONTACT_ALREADY_PITCHED') {
          counts.alreadyPitched += 1;
          await skip(prospect, 'contact_already_pitched', error.message);
          continue;
        }
        throw error;
      }
      // Another run of the site (a scheduled one beside an on-demand one) pitched or skipped this
      // prospect while this one was reading its pages: the record is that run's, and so is the mail.
      if (recorded.events[0]?.type !== 'ProspectPitched') {
        counts.alreadyHandled += 1;
        continue;
      }
      sentToday += 1;

      const draft = withDraftHash({
        messageId,
        rfcMessageId: replyRfcMessageId(messageId, site.domain),
        from: { name: settings.senderName ?? site.domain, address: senderAddress(deps.config.AGENT_FROM_LOCAL_PART, site.domain) },
        to: { name: prospect.name, address: email },
        subject: pitch.subject,
        bodyText: pitch.text,
        inReplyTo: null,
        references: [],
        returnPath: bounceAddress(ctx.secrets, messageId, deps.config.MAIL_DOMAIN),
        drafter: 'pitch-template-v1',
      });
      const ref = { conversationId, siteId: run.siteId, teamId: run.teamId, now: ctx.clock.now().getTime() };
      await handleCommand(ctx, conversationStream(conversationId), conversationDecider, {
        type: 'StartOutboundConversation',
        data: { ...ref, opportunityId, contactName: prospect.name, prospectUrl: prospect.url, offeredUrl: article?.url ?? null, runId: run.runId, draft },
      });
      // A temporary failure is recorded with a retryAt: the agent worker, which follows the log, retries it.
      const { AGENT_SEND_ATTEMPTS: maxAttempts, AGENT_RETRY_BASE_MS: baseMs } = deps.config;
      const result = await sendDraft(deps.mailer, draft, () => (maxAttempts > 1 ? ctx.clock.now().getTime() + baseMs : null));
      await handleCommand(ctx, conversationStream(conversationId), conversationDecider, {
        type: 'RecordSendResult',
        data: { ...ref, now: ctx.clock.now().getTime(), messageId, attempt: 1, result },
      });
      if (result.ok) counts.pitchesSent += 1;
      else counts.sendFailures += 1;
      proposals.push({ kind: 'outreach', prospectUrl: prospect.url, contactEmail: email, conversationId, subject: pitch.subject, opportunityId, offeredUrl: article?.url ?? null });
    } finally {
      release();
    }
  }
  return { proposals, counts, creditsUsed: 0 };
};

type Discovery =
  | { outcome: 'found'; contact: { email: string; onDomain: boolean }; topicText: string; pagesFetched: number }
  | { outcome: 'no_contact_found' | 'robots_disallowed' | 'unreachable'; detail: string; pagesFetched: number };

/** Home page, then the contact/about pages it links to (or /contact), each allowed by robots.txt, until an address turns up. */
export async function discoverContact(fetcher: PageFetcher, prospectUrl: string, signal: AbortSignal): Promise<Discovery> {
  const home = new URL(prospectUrl);
  let pagesFetched = 0;
  const get = async (url: string) => {
    pagesFetched += 1;
    return fetcher.fetch(url, { maxBytes: MAX_PAGE_BYTES, signal });
  };

  let robots = '';
  try {
    const answer = await get(new URL('/robots.txt', home).toString());
    // RFC 9309: a 4xx means no rules; a 5xx means the site is to be treated as fully disallowed.
    if (answer.status >= 500) robots = 'User-agent: *\nDisallow: /';
    else if (answer.status >= 200 && answer.status < 300) robots = answer.body;
  } catch (error) {
    return { outcome: 'unreachable', detail: describe(error), pagesFetched };
  }
  const allowed = (url: URL) => robotsAllows(robots, fetcher.userAgent, `${url.pathname}${url.search}`);
  if (!allowed(home)) return { outcome: 'robots_disallowed', detail: `robots.txt disallows ${home.pathname} for ${fetcher.userAgent}`, pagesFetched };

  let page;
  let pageUrl = home;
  try {
    page = await get(pageUrl.toString());
    // Sites move their home page (`/` to `/en/`, the bare domain to `www.`): follow a few redirects
    // that stay on the prospect's site, each fetched through the same guarded client and robots.txt.
    for (let hops = 0; page.status >= 300 && page.status < 400 && page.location && hops < MAX_HOME_REDIRECTS; hops++) {
      const next = new URL(page.location);
      if (next.protocol !== 'https:' || next.hostname.replace(/^www\./, '') !== home.hostname.replace(/^www\./, '') || !allowed(next)) break;
      pageUrl = next;
      page = await get(pageUrl.toString());
    }
  } catch (error) {
    return { outcome: 'unreachable', detail: describe(error), pagesFetched };
  }
  if (page.status < 200 || page.status >= 300) return { outcome: 'unreachable', detail: `the home page answered ${page.status}`, pagesFetched };
  const topicText = pageTopicText(page.body);
  const emails = extractEmails(page.body);
  let contact = chooseContact(emails, prospectUrl);

  if (!contact?.onDomain) {
    const links = contactPageLinks(page.body, pageUrl.toString(), MAX_CONTACT_PAGES);
    if (links.length === 0) links.push(new URL('/contact', home).toString());
    let refused = 0;
    for (const link of links) {
      if (signal.aborted) break;
      if (!allowed(new URL(link))) {
        refused += 1;
        continue;
      }
      try {
        const sub = await get(link);
        if (sub.status >= 200 && sub.status < 300) emails.push(...extractEmails(sub.body));
      } catch {
        // One contact page down is no reason to give up on the prospect.
      }
      contact = chooseContact(emails, prospectUrl);
      if (contact?.onDomain) break;
    }
    if (!contact && refused > 0 && refused === links.length) {
      return { outcome: 'robots_disallowed', detail: `robots.txt disallows the contact pages for ${fetcher.userAgent}`, pagesFetched };
    }
  }
  if (!contact) return { outcome: 'no_contact_found', detail: 'no address on the home page or its contact pages', pagesFetched };
  return { outcome: 'found', contact, topicText, pagesFetched };
}

const describe = (error: unknown) => (error instanceof PageFetchError || error instanceof Error ? error.message : String(error));
