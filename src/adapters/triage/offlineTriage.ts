import { THANKS_ON_THREAD, THREAD_REPLY } from '../../domain/outreachAgent.ts';
import type { Triage, TriageDecision, TriageInput, TriageOutcome } from '../../ports/triage.ts';
import { bareHost, isOnOrUnder, urlHost } from '../../domain/domainName.ts';

export const OFFLINE_TRIAGE_NAME = 'offline-v1';

/**
 * Reads only this much of the sender's own text: pitches and replies are short, and a bound keeps
 * every pattern below linear on the largest body ingestion accepts.
 */
const MAX_TEXT = 20_000;

// --- opt-out: the sender asks not to be contacted (highest priority) ---
/** The request alone ("STOP", "Unsubscribe"): at the end of a longer message it is a footer's link text. */
const BARE_OPT_OUT = /^\s*(?:stop|unsubscribe|remove(?:\s+me)?|opt\s*-?\s*out)\s*[.!]*\s*$/i;
const BARE_OPT_OUT_FOOTER_AFTER = 100;
const OPT_OUT = [
  /\bunsubscribe\b/i,
  /\b(?:remove|delete|take|drop|erase)\s+(?:me|us|my\s+(?:e-?mail|address|contact|details|data|name))\b/i,
  /\b(?:take|remove|get)\s+me\s+off\b/i,
  /\bstop(?:ped|ping)?\s+(?:e-?mailing|contacting|messaging|sending|writing|spamming|bothering|receiving|getting)\b/i,
  /\b(?:do\s+not|don'?t|never)\s+(?:contact|e-?mail|write\s+to|message|spam)\s+(?:me|us)\b/i,
  /\b(?:do\s+not|don'?t|no\s+longer)\s+(?:want|wish)\s+to\s+(?:receive|get|hear)\b/i,
  /\bno\s+(?:more|further)\s+(?:e-?mails|messages|contact)\b/i,
  /\bopt\s*(?:me\s+)?-?\s*out\b/i,
  /\bleave\s+me\s+alone\b/i,
  /\bcease\s+(?:all\s+)?(?:contact|communications?|e-?mailing)\b/i,
  /\bplease\s+stop(?=\s*(?:[.!,;]|$|(?:it|this|now|immediately)\b))/i,
  BARE_OPT_OUT,
  // German, French, Spanish, Italian, Dutch
  /\b(?:abmelden|abbestellen|keine\s+(?:weiteren\s+)?(?:e-?mails|nachrichten)|nicht\s+mehr\s+(?:kontaktieren|anschreiben|schreiben))/i,
  /(?:d[ée]sabonner|d[ée]sinscri|ne\s+plus\s+me\s+(?:contacter|[ée]crire|envoyer))/i,
  /(?:darme\s+de\s+baja|dar\s+de\s+baja|no\s+me\s+(?:contacten|contactes|escriban|escribas)|dej[ea]n?\s+de\s+(?:escribirme|enviarme|contactarme))/i,
  /(?:cancellami|non\s+(?:contattatemi|scrivetemi|contattarmi))/i,
  /\b(?:afmelden|uitschrijven)\b/i,
];
/** A subject that is itself the request ("Unsubscribe", "Re: remove me"). */
const OPT_OUT_SUBJECT = /^(?:unsubscribe|remove(?:\s+me)?|stop|opt\s*-?\s*out)\b/i;
/** Sentences that tell the reader how to opt out (footers, P.S. lines) rather than asking to. */
const OPT_OUT_INSTRUCTION =
  /\b(?:if|should|in\s+case)\s+you(?:'d|\s+would)?\s+(?:rather\s+not|prefer\s+not|don'?t\s+want|do\s+not\s+want|no\s+longer\s+want|wish|want)\b|\bclick\b|https?:\/\/|\b(?:reply|respond|answer)(?:ing)?\s+(?:with\s+)?["'“‘]?(?:stop|unsubscribe|remove|no)\b|\bto\s+(?:unsubscribe|opt\s*-?\s*out|stop\s+receiving)\b|\bmanage\s+(?:your\s+)?(?:e-?mail\s+)?preferences\b|\bunsubscribe\s+(?:here|link|below)\b/i;

// --- risky: a human must answer ---
const LEGAL =
  /\b(?:lawyers?|attorneys?|solicitors?|legal\s+(?:action|team|department|steps|proceedings)|law\s*suits?|sue\s+you|we\s+will\s+sue|take\s+you\s+to\s+court|cease\s+and\s+desist|dmca|copyright\s+infringement|infring\w*|defamat\w*|libel\w*)\b/i;
const HOSTILE =
  /\b(?:unacceptable|ridiculous|outrageous|disgusting|scam(?:mer)?s?|fraud\w*|how\s+dare|wtf|shame\s+on\s+you|report\s+you|fed\s+up|sick\s+of|last\s+warning|f+u+c+k\w*|shit\w*|complain(?:t|ts|ing)?)\b|!{2,}/i;

// --- decline: what the site refuses ---
const PROHIBITED_NICHE =
  /\b(?:casinos?|gambling|slot\s+machines?|online\s+slots|poker|roulette|(?:sports?|football|soccer|online|live|horse|casino)\s+betting|betting\s+(?:tips|odds|sites?|platforms?|bonus(?:es)?)|sportsbooks?|bookmakers?|cbd|cannabis|marijuana|thc|vap(?:e|es|ing)|payday|cash\s+advances?|title\s+loans?|quick\s+loans?|forex|binary\s+options?|crypto(?:currency|currencies)?|bitcoin|ethereum|nfts?|presale|airdrops?|adult\s+(?:content|sites?|dating|videos?)|porn\w*|escorts?|xxx|viagra|cialis|online\s+pharmacy|replicas?|essay\s+(?:writing|service|help)|write\s+my\s+essay|hookups?)\b/i;
const PROHIBITED_HOST = /casino|poker|payday|crypto|forex|fxsignal|viagra|essay|porn|xxx|cbd|(?:^|\.)(?:bet|casino|poker|loans?)$/i;
const LINK_SCHEME =
  /\b(?:pbns?|private\s+blog\s+networks?|link\s+farms?|\d+\+?\s*(?:high[- ]?(?:da|dr|authority)\s+)?backlinks|guaranteed\s+(?:backlinks|indexing|rankings?|first\s+page)|(?:backlink|link)\s+packages?|buy\s+(?:back)?links|sell(?:ing)?\s+(?:back)?links|(?:da|dr)\s*\d+\s*\+)/i;
const SEO_SALES =
  /\b(?:(?:first|1st)\s+page\s+(?:of|on)\s+google|page\s+(?:1|one)\s+(?:of|on)\s+google|rank(?:ing)?\s+(?:#1|number\s+one|higher)\s+on\s+google|seo\s+(?:services|experts?|agency|audit|packages?)|free\s+(?:seo\s+|website\s+)?audit|web\s+design\s+services|increase\s+your\s+traffic\s+by|we\s+can\s+(?:boost|improve|increase)\s+your\s+(?:rankings?|traffic))\b/i;
/** Money phrases said in the negative ("no fee", "free of charge") are removed before looking for money. */
const NEGATED_MONEY =
  /\b(?:no|without(?:\s+any)?|zero|nothing\s+to)\s+(?:fees?|charges?|payments?|costs?|pay)\b|\bfree\s+of\s+charge\b|\b(?:don'?t|do\s+not|never|won'?t|will\s+not)\s+(?:charge|ask\s+for|require|sell|pay|accept)\w*(?:\s+(?:any|a|for))?(?:\s+(?:fees?|payments?|money|links?))?/gi;
/** The sender states terms with money: a price, a fee, a payment channel, or an offer to pay. */
const PAYMENT_TERMS =
  /[$€£]\s?\d|\b\d+\s?(?:usd|eur|gbp|dollars|euros|pounds)\b|\b(?:we|i)\s+charge\b|\bfees?\b|\bprice\s*lists?\b|\brate\s*cards?\b|\b(?:paypal|payoneer|wire\s+transfer|payable|invoice)\b|\b(?:pay|payment)\s+(?:upfront|in\s+advance)\b|\b(?:happy|willing|glad|ready)\s+to\s+pay\b|\bwe\s+(?:can|could|will|'ll)\s+pay\b|\bpaid\s+(?:posts?|articles?|links?|placements?|guest\s+posts?)\b|\bsponsored\s+(?:posts?|articles?|content|links?)\b|\byour\s+(?:prices?|pricing|rates?|fees?)\b|\b(?:costs?|prices?|rates?|fees?)\s+(?:of|for)\s+(?:a\s+|an\s+|one\s+)?(?:link|post|article|placement|insertion|guest\s+post)s?\b/i;
const PRICING_QUESTION = /\b(?:how\s+much|what\s+(?:would|will|do|does)\s+(?:you|it)\s+(?:charge|cost|ask)|charge|price|pricing|rates?|cost|budget|fees?)\b/i;

// --- on a thread ---
const AUTO_REPLY_SUBJECT = /^(?:automatic\s+reply|auto(?:matic)?[- ]?reply|out\s+of\s+(?:the\s+)?office|abwesenheit|r[ée]ponse\s+automatique)/i;
const AUTO_REPLY_BODY = /\b(?:out\s+of\s+(?:the\s+)?office|on\s+(?:annual\s+|parental\s+|sick\s+)?leave\s+until|limited\s+access\s+to\s+(?:e-?mail|my\s+inbox)|this\s+is\s+an\s+automatic\s+reply)\b/i;
const WITHDRAWAL = /\b(?:not\s+interested|no\s+longer\s+interested|no\s+thanks|no\s+thank\s+you|we'?ll\s+pass|changed\s+(?:our|my)\s+minds?|decided\s+(?:against|not\s+to)|(?:another|a\s+different)\s+(?:way|direction))\b/i;
const THANKS =
  /\b(?:thanks?|thank\s+you|thx|cheers|appreciated?|sounds\s+(?:great|good|perfect|fine)|perfect|awesome|great|wonderful|excellent|looks\s+good|will\s+do|got\s+it|noted|brilliant|lovely|ok(?:ay)?|sure|deal|agreed)\b/i;
const HEDGE = /\b(?:but|however|although|though|unfortunately|instead|not\s+sure|unless|only\s+if|before|wait|hmm+)\b/i;
const SIMPLE_REPLY_MAX = 280;

// --- first pitch ---
const CONDITIONS =
  /\b(?:only\s+if|on\s+(?:the\s+)?condition|(?:two|2|three|3|several|multiple)\s+(?:do-?follow\s+)?(?:back)?links|(?:keep|stay|remain|must\s+be|guarantee\w*)\b[^.?!\n]{0,30}\bpermanent(?:ly)?|non-?negotiable|counter[- ]?offers?|negotiat\w*|discounts?)\b/i;
const TERMS_WORDS =
  /\b(?:guidelines|requirements|word\s+count|do-?follow|no-?follow|permanent(?:ly)?|how\s+long|turnaround|deadline|contract|terms|exclusive(?:ly)?)\b/i;
const NEGOTIATION = /\b(?:instead\s+of|prefer\s+the\s+anchor|only\s+if|on\s+(?:the\s+)?condition|counter[- ]?offers?|negotiat\w*|discounts?|do-?follow|no-?follow)\b/i;
const PITCH_KINDS: Array<[string, RegExp]> = [
  ['guest_post', /\bguest\s+(?:posts?|articles?|blogs?|contributions?)\b|\bwrite\s+(?:a|an)\s+(?:post|article)\s+for\b|\bcontribut\w*/i],
  ['link_exchange', /\b(?:link\s+exchanges?|exchange\s+links|swap\s+links|reciprocal)\b/i],
  ['broken_link', /\b(?:broken|dead|outdated)\s+(?:links?|pages?)\b|\b404\b|\breplace\s+(?:it|the\s+link)\b/i],
  ['collaboration', /\b(?:collaborat\w*|partner(?:ship)?s?|co-?marketing|embed\w*|infographic)\b/i],
  [
    'link_request',
    /\b(?:link(?:ing)?\s+(?:to|back)|add\s+(?:a|our|the|this|my)?\s*link|insert\s+(?:a|our)?\s*link|link\s+insertions?|mention\w*|referenc\w*|cite|citation|credit\s+link|resource|addition|would\s+you\s+(?:consider|be\s+open|mind)|could\s+you\s+(?:add|include|link|mention|update|swap|replace))\b/i,
  ],
];
const URL_RE = /\bhttps?:\/\/[^\s<>"'()\[\]{}]+/gi;
const SHORTENERS = new Set(['bit.ly', 'tinyurl.com', 't.co', 'goo.gl', 'ow.ly', 'is.gd', 'buff.ly', 'rebrand.ly', 'cutt.ly', 'shorturl.at', 'rb.gy', 'tiny.cc', 't.ly']);

/**
 * The offline classifier: patterns over the sender's own words (quoted history, signature and
 * opt-out footers removed), no network, deterministic. In order: an opt-out wins over everything;
 * legal threats and hostility go to a human; prohibited niches, link schemes, SEO sales and paid
 * links are declined; on a thread only a short thanks is accepted and anything else goes to a
 * human; a first pitch is accepted when it is a recognisable pitch naming a usable target URL.
 */
export class OfflineTriage implements Triage {
  readonly name = OFFLINE_TRIAGE_NAME;

  async triage(input: TriageInput): Promise<TriageDecision> {
    return { ...classify(input), classifier: this.name };
  }
}

export function classify(input: TriageInput): { outcome: TriageOutcome; reasons: string[] } {
  const own = ownText(input.bodyText);
  const subject = stripSubjectPrefixes(input.subject);
  const sentences = splitSentences(own);
  const decide = (outcome: TriageOutcome, ...reasons: string[]) => ({ outcome, reasons });

  const optOutSentences = sentences.filter(
    (s, i) => !OPT_OUT_INSTRUCTION.test(s) && !(i >= 2 && i === sentences.length - 1 && BARE_OPT_OUT.test(s) && own.length > BARE_OPT_OUT_FOOTER_AFTER),
  );
  if (OPT_OUT_SUBJECT.test(subject) || optOutSentences.some((s) => OPT_OUT.some((re) => re.test(s)))) return decide('opt_out', 'opt_out_phrase');

  const text = `${subject}\n${own}`;
  if (LEGAL.test(text)) return decide('needs_human', 'legal_threat');
  if (HOSTILE.test(own)) return decide('needs_human', 'hostile_tone');

  const target = targetOf(input, own);
  if (PROHIBITED_NICHE.test(text) || (target.host !== null && PROHIBITED_HOST.test(target.host))) return decide('decline', 'prohibited_niche');
  if (LINK_SCHEME.test(text)) return decide('decline', 'link_scheme');
  if (SEO_SALES.test(text)) return decide('decline', 'seo_sales_pitch');
  if (AUTO_REPLY_SUBJECT.test(subject) || AUTO_REPLY_BODY.test(own)) return decide('needs_human', 'auto_reply');

  return input.isReply ? classifyReply(own, sentences) : classifyPitch(input, text, sentences, target);
}

function classifyReply(own: string, sentences: string[]) {
  const statements = sentences.filter((s) => !s.trim().endsWith('?'));
  if (statements.some((s) => PAYMENT_TERMS.test(withoutNegatedMoney(s)))) return { outcome: 'decline' as const, reasons: ['paid_link_demand'] };
  const short = own.trim().length <= SIMPLE_REPLY_MAX;
  if (short && WITHDRAWAL.test(own)) return { outcome: 'decline' as const, reasons: ['prospect_withdrew'] };
  const asks = own.includes('?');
  if (short && !asks && THANKS.test(own) && !HEDGE.test(own) && !NEGOTIATION.test(own)) return { outcome: 'accept' as const, reasons: [THANKS_ON_THREAD] };
  const reasons = [THREAD_REPLY];
  const questions = sentences.filter((s) => s.trim().endsWith('?'));
  if (questions.some((s) => PRICING_QUESTION.test(s))) reasons.push('pricing_question');
  if (NEGOTIATION.test(own)) reasons.push('negotiation');
  if (asks) reasons.push('question');
  return { outcome: 'needs_human' as const, reasons };
}

function classifyPitch(input: TriageInput, text: string, sentences: string[], target: Target) {
  if (PAYMENT_TERMS.test(withoutNegatedMoney(text))) return { outcome: 'decline' as const, reasons: ['paid_link'] };
  if (CONDITIONS.test(text)) return { outcome: 'needs_human' as const, reasons: ['conditions'] };
  if (sentences.some((s) => s.trim().endsWith('?') && TERMS_WORDS.test(s))) return { outcome: 'needs_human' as const, reasons: ['terms_question'] };
  const kinds = PITCH_KINDS.filter(([, re]) => re.test(text)).map(([kind]) => kind);
  if (kinds.length === 0 && input.ask) kinds.push('link_request');
  if (kinds.length === 0) return { outcome: 'needs_human' as const, reasons: ['unclear_intent'] };
  if (target.url === null) return { outcome: 'needs_human' as const, reasons: [...kinds, 'no_target_url'] };
  if (target.host !== null && SHORTENERS.has(target.host)) return { outcome: 'needs_human' as const, reasons: [...kinds, 'shortened_url'] };
  return { outcome: 'accept' as const, reasons: [...kinds, 'target_url_named'] };
}

interface Target {
  url: string | null;
  host: string | null;
}

/** The URL the sender wants linked: the extractor's ask, else the first URL off the site's own domain. */
function targetOf(input: TriageInput, own: string): Target {
  const site = bareHost(input.siteDomain);
  const candidates = input.ask ? [input.ask.targetUrl] : [...own.matchAll(URL_RE)].map((m) => m[0].replace(/[.,;:!?]+$/, ''));
  for (const url of candidates) {
    const host = urlHost(url);
    if (host === null || isOnOrUnder(host, site)) continue;
    return { url, host };
  }
  return { url: null, host: null };
}

/** The sender's own words: quoted history, the signature block and anything past MAX_TEXT removed. */
export function ownText(body: string): string {
  let text = body.slice(0, MAX_TEXT * 2).replace(/\r\n?/g, '\n');
  const cuts = [
    /^[ \t]*On\b[^\n]{0,300}(?:\n[^\n]{0,300})?\bwrote:[ \t]*$/im,
    /^[ \t]*(?:Le|Am|El|Il)\b[^\n]{0,300}(?:\n[^\n]{0,300})?(?:a\s+écrit|schrieb|escribió|ha\s+scritto)\s*:[ \t]*$/im,
    /^[ \t]*-{2,}\s*Original Message\s*-{2,}/im,
    /^[ \t]*_{10,}[ \t]*$/m,
    /^--[ \t]?$/m,
  ];
  for (const re of cuts) {
    const m = re.exec(text);
    if (m) text = text.slice(0, m.index);
  }
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('>'))
    .join('\n')
    .slice(0, MAX_TEXT);
}

const stripSubjectPrefixes = (subject: string) => subject.replace(/^(?:\s*(?:re|fwd?|aw|wg|tr|sv|vs)\s*(?:\[\d+\])?\s*:\s*)+/i, '').trim();

const splitSentences = (text: string) => text.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.trim() !== '');

const withoutNegatedMoney = (text: string) => text.replace(NEGATED_MONEY, ' ');
