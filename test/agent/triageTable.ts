import type { Ask } from '../../src/domain/ingestion.ts';
import type { TriageInput, TriageOutcome } from '../../src/ports/triage.ts';

/**
 * Realistic messages to a gardening blog (greenthumb.blog) with the outcome a careful site owner
 * would choose. Written before the classifier's rules; `heldOut` rows are rephrasings kept apart
 * while the rules were written, to check that the rules generalise beyond the main rows.
 */
export interface TriageCase {
  name: string;
  expected: TriageOutcome;
  input: TriageInput;
  heldOut?: boolean;
}

export const SITE = 'greenthumb.blog';

const ask = (targetUrl: string, more: Partial<Ask> = {}): Ask => ({ targetUrl, anchorText: null, suggestedSentence: null, sourceUrl: null, ...more });

function pitch(subject: string, bodyText: string, a: Ask | null, from = 'tom@soilsmart.io', fromName: string | null = 'Tom Baker'): TriageInput {
  return { subject, bodyText, from, fromName, siteDomain: SITE, isReply: false, ask: a };
}

function reply(bodyText: string, a: Ask | null = ask('https://soilsmart.io/compost-guide'), subject = 'Re: Guest post idea: companion planting'): TriageInput {
  return { subject, bodyText, from: 'tom@soilsmart.io', fromName: 'Tom Baker', siteDomain: SITE, isReply: true, ask: a };
}

const OUR_EARLIER_REPLY = [
  'On Tue, 4 Jun 2024 at 10:12, Anna from Greenthumb <anna@greenthumb.blog> wrote:',
  '> Hi Tom, thanks for reaching out. We do not sell links and never charge a fee,',
  '> but we are happy to add your compost guide. Reply STOP if you prefer not to hear from us.',
].join('\n');

export const TRIAGE_CASES: TriageCase[] = [
  // --- accept: clear pitches naming a relevant URL ---
  {
    name: 'guest post pitch with a link back',
    expected: 'accept',
    input: pitch(
      'Guest post idea: companion planting',
      "Hi Anna,\n\nI'm Tom from SoilSmart. I loved your post on raised beds (https://greenthumb.blog/raised-beds). I'd love to contribute a guest post on companion planting for your readers. In the article I would include one link back to our guide https://soilsmart.io/compost-guide.\n\nLet me know if that works!\nTom",
      ask('https://soilsmart.io/compost-guide', { sourceUrl: 'https://greenthumb.blog/raised-beds' }),
    ),
  },
  {
    name: 'broken-link outreach',
    expected: 'accept',
    input: pitch(
      'Broken link on your tools page',
      "Hello,\n\nWhile reading https://greenthumb.blog/tools I noticed the link to 'Garden Tool Reviews' is broken (it returns a 404). We have an updated resource at https://toolshed.co/reviews that could replace it. Would you consider swapping the link?\n\nBest,\nMaria",
      ask('https://toolshed.co/reviews', { sourceUrl: 'https://greenthumb.blog/tools' }),
      'maria@toolshed.co',
      'Maria Lopez',
    ),
  },
  {
    name: 'link exchange offer',
    expected: 'accept',
    input: pitch(
      'Link exchange?',
      'Hey there, I run the blog of an organic seed shop. Would you be open to a link exchange? I would link to your tomato guide from our planting calendar, and you could add a link to https://seedbank.org/heirloom-tomatoes in your heirloom varieties article.',
      ask('https://seedbank.org/heirloom-tomatoes'),
      'lea@seedbank.org',
      'Lea',
    ),
  },
  {
    name: 'resource suggestion with anchor text',
    expected: 'accept',
    input: pitch(
      'A resource for your pollinator list',
      'Hi! Your list of pollinator-friendly plants is super useful. We just published a study on native bee decline: https://beeresearch.org/study-2024. It could be a nice addition to the list; anchor text could be "native bee study". Thanks for considering it.',
      ask('https://beeresearch.org/study-2024', { anchorText: 'native bee study' }),
      'press@beeresearch.org',
      null,
    ),
  },
  {
    name: 'infographic collaboration',
    expected: 'accept',
    input: pitch(
      'Collaboration: water-saving infographic',
      'Hi team, we would love to collaborate with you. Our infographic on water-saving drip irrigation (https://dripwise.com/infographic) fits your drought gardening article perfectly. Feel free to embed it with a credit link to our page.',
      ask('https://dripwise.com/infographic'),
      'hello@dripwise.com',
      'Dripwise',
    ),
  },
  {
    name: 'formal contribution proposal',
    expected: 'accept',
    input: pitch(
      'Contribution proposal',
      'Dear Editor,\n\nI am writing to propose a contribution to Greenthumb. Our horticulture department has published a peer-reviewed overview of soil pH management, available at https://agri.university.edu/soil-ph. We believe it would be a valuable reference in your article on acid-loving plants.\n\nKind regards,\nDr. P. Singh',
      ask('https://agri.university.edu/soil-ph'),
      'p.singh@university.edu',
      'Dr. P. Singh',
    ),
  },
  {
    name: 'guest post that says it is free (held out: negated fee)',
    expected: 'accept',
    heldOut: true,
    input: pitch(
      'Free guest article on vertical gardens',
      'Hi, I would like to write a guest article on vertical gardens for small balconies. There is no fee and nothing to pay, it is completely free of charge. I would only ask for one contextual link to https://balconygreen.net/vertical-kits.',
      ask('https://balconygreen.net/vertical-kits'),
      'sam@balconygreen.net',
      'Sam',
    ),
  },
  {
    name: 'pitch with an opt-out footer (held out)',
    expected: 'accept',
    heldOut: true,
    input: pitch(
      'Your mulch article + our research',
      "Hi Anna,\nI came across your mulching guide and thought our comparison of organic mulches might be a good fit: https://mulchlab.com/comparison. Would you consider linking to it?\n\nThanks,\nKim\n\nP.S. If you'd rather not hear from me again, just reply 'unsubscribe' and I won't follow up.",
      ask('https://mulchlab.com/comparison'),
      'kim@mulchlab.com',
      'Kim',
    ),
  },
  {
    name: 'pitch with a tracking signature holding an unsubscribe link (held out)',
    expected: 'accept',
    heldOut: true,
    input: pitch(
      'Suggestion for your seed-starting post',
      'Hello, we made a free seed-starting calculator that tells you when to sow each vegetable: https://sowcalc.app/calculator. It would fit nicely in your seed-starting post. Happy to hear what you think!\n\n--\nNina, Sowcalc\nTo stop receiving these emails, click here: https://mailtrack.example/unsubscribe?u=1',
      ask('https://sowcalc.app/calculator'),
      'nina@sowcalc.app',
      'Nina',
    ),
  },

  // --- decline: paid-link demands, prohibited niches, link farms, sales spam ---
  {
    name: 'sponsored post price list',
    expected: 'decline',
    input: pitch(
      'Sponsored post price list - 40 sites',
      'Hello webmaster,\nWe offer sponsored posts on our network of 40 home & garden sites.\nPrice list:\n- DA 50+: $150 per post\n- DA 30+: $80 per post\nAll links dofollow, permanent. Payment via PayPal.',
      null,
      'sales@linkmarket.biz',
      null,
    ),
  },
  {
    name: 'publisher charging a fee to publish our link',
    expected: 'decline',
    input: pitch(
      'Publish your article on our blog',
      'Hi, we liked your blog. We can publish your article with a backlink on our gardening magazine. We charge a small fee of $45 per article, payable upfront.',
      null,
      'editor@gardenmagz.net',
      null,
    ),
  },
  {
    name: 'casino guest post',
    expected: 'decline',
    input: pitch(
      'Guest post collaboration',
      'Hi, we would like to publish a guest post on your site about the best online casino bonuses this year, with a link to https://spinwin-casino.bet. The article will be high quality.',
      ask('https://spinwin-casino.bet'),
      'outreach@spinwin-casino.bet',
      null,
    ),
  },
  {
    name: 'CBD product link request',
    expected: 'decline',
    input: pitch(
      'Partnership opportunity',
      'Hello! Our client sells premium CBD oil and gummies for relaxation. Could you add a link to https://calmcbd.shop in your article about calming herbs? It would be a great fit.',
      ask('https://calmcbd.shop'),
      'agency@seoreach.io',
      null,
    ),
  },
  {
    name: 'payday loans link',
    expected: 'decline',
    input: pitch(
      'Article suggestion',
      'Hi, I have an article about how families can save money on gardening, which mentions our partner for fast payday loans: https://quickcash-now.com. Can you publish it with the link?',
      ask('https://quickcash-now.com'),
      'writer@contentfarm.xyz',
      null,
    ),
  },
  {
    name: 'crypto token spam',
    expected: 'decline',
    input: pitch(
      'Exclusive opportunity for your readers',
      'Earn 10x with our new token presale! Add a link to https://moonx-token.io on your homepage and we will send you an airdrop of 5,000 MOONX. Bitcoin and crypto readers love it.',
      ask('https://moonx-token.io'),
      'team@moonx-token.io',
      null,
    ),
  },
  {
    name: 'link farm / PBN backlink package',
    expected: 'decline',
    input: pitch(
      'Boost your rankings with 500 backlinks',
      'Get 500 high DA backlinks from our private blog network (PBN), guaranteed indexing in 7 days. Packages start cheap, order now!',
      null,
      'seo@backlinks4u.info',
      null,
    ),
  },
  {
    name: 'SEO agency sales pitch',
    expected: 'decline',
    input: pitch(
      'Your website is not ranking',
      'Hi, I noticed greenthumb.blog is not ranking on the first page of Google for key terms. Our SEO experts can fix it: guaranteed first page rankings in 30 days. Shall I send you a free audit?',
      null,
      'mark@rankfast.agency',
      'Mark',
    ),
  },
  {
    name: 'offer to pay for a link',
    expected: 'decline',
    input: pitch(
      'Paid link placement',
      'Hi, we are happy to pay $200 for a dofollow link from your composting article to https://binbuddy.com/bins. Let me know your PayPal.',
      ask('https://binbuddy.com/bins'),
      'growth@binbuddy.com',
      null,
    ),
  },
  {
    name: 'asking the price of a sponsored post (fresh inbound)',
    expected: 'decline',
    input: pitch(
      'Sponsored post',
      "Hello, what's your price for a sponsored post with a dofollow link to https://gadgetpro.shop? We publish on many blogs.",
      ask('https://gadgetpro.shop'),
      'buy@gadgetpro.shop',
      null,
    ),
  },
  {
    name: 'prospect replying with an editorial fee on the thread',
    expected: 'decline',
    input: reply('Sure, we can do it. Our editorial fee is $120 per link, payable via PayPal before publication.'),
  },
  {
    name: 'sports betting article (held out)',
    expected: 'decline',
    heldOut: true,
    input: pitch(
      'Content partnership',
      'Hello, we are looking for partners to publish an article about football betting tips with a link to https://betking-tips.com. Interested?',
      ask('https://betking-tips.com'),
      'partners@betking-tips.com',
      null,
    ),
  },
  {
    name: 'forex signals guest post (held out)',
    expected: 'decline',
    heldOut: true,
    input: pitch(
      'Guest post for your site',
      'Hi, I can write a guest post for you. It would include a link to our Forex trading signals service at https://fxsignals.pro. Hope to hear from you.',
      ask('https://fxsignals.pro'),
      'ali@fxsignals.pro',
      null,
    ),
  },
  {
    name: 'essay writing service link (held out)',
    expected: 'decline',
    heldOut: true,
    input: pitch(
      'Link insertion request',
      'Hi, could you insert a link to our essay writing service https://essaypro-help.com in your article about school gardens? Students would benefit.',
      ask('https://essaypro-help.com'),
      'linkteam@essaypro-help.com',
      null,
    ),
  },
  {
    name: 'prospect withdraws on the thread',
    expected: 'decline',
    input: reply('Not interested anymore.'),
  },

  // --- needs_human: negotiation, questions, risk, ambiguity ---
  {
    name: 'thread: what would you charge?',
    expected: 'needs_human',
    input: reply('Thanks Anna! Before we go on: what would you charge for a permanent dofollow link?'),
  },
  {
    name: 'thread: negotiating the link terms',
    expected: 'needs_human',
    input: reply("Thanks for getting back to me. Could you make the link dofollow instead of nofollow? Also we'd prefer the anchor 'best compost bins'."),
  },
  {
    name: 'legal threat about a photo',
    expected: 'needs_human',
    input: pitch(
      'Unauthorized use of our photo',
      'Your article https://greenthumb.blog/roses uses our photograph without permission. Remove it within 48 hours or our lawyer will file a DMCA notice and pursue legal action.',
      null,
      'legal@rosefarm.com',
      'Rose Farm Legal',
    ),
  },
  {
    name: 'angry thread reply',
    expected: 'needs_human',
    input: reply('This is the third time I am writing. Your site still links to my old domain and nobody answers. Unacceptable!'),
  },
  {
    name: 'questions about guest post guidelines, no URL',
    expected: 'needs_human',
    input: pitch('Guest posts?', 'Hi, do you accept guest posts? What are your guidelines and the word count you expect?', null, 'writer@freelance.me', 'Chris'),
  },
  {
    name: 'guest post offer naming no URL',
    expected: 'needs_human',
    input: pitch(
      'Writing for Greenthumb',
      "Hello! I'm a freelance garden writer and I'd love to write a guest post for your blog on topics like winter pruning or growing herbs indoors. Samples available on request.",
      null,
      'writer@freelance.me',
      'Chris',
    ),
  },
  {
    name: 'vague request for a call',
    expected: 'needs_human',
    input: pitch('Quick question', 'Hey, can we hop on a call this week? I have something to discuss with you.', null, 'dan@startup.io', 'Dan'),
  },
  {
    name: 'out-of-office auto-reply on the thread',
    expected: 'needs_human',
    input: reply('I am out of the office until June 12 with limited access to email. For urgent matters please contact my colleague.', undefined, 'Automatic reply: Guest post idea: companion planting'),
  },
  {
    name: 'pitch with strings attached',
    expected: 'needs_human',
    input: pitch(
      'Guest post offer',
      'We can offer you a well-researched guest post on soil health, but only if you give us two dofollow links in the body, pointing to https://soilsmart.io/shop, and keep them permanently.',
      ask('https://soilsmart.io/shop'),
    ),
  },
  {
    name: 'thread: asking whether the link stays up',
    expected: 'needs_human',
    input: reply('Before I send the article, can you confirm the link will stay up permanently and will not be marked as sponsored?'),
  },
  {
    name: 'thread: contact moved on',
    expected: 'needs_human',
    input: reply('I no longer work at SoilSmart, please contact mark@soilsmart.io instead.'),
  },
  {
    name: 'thread: hesitant answer (held out)',
    expected: 'needs_human',
    heldOut: true,
    input: reply("Hmm, I'm not sure our editor will agree to that. Let me check with her and get back to you."),
  },
  {
    name: 'pitch through a link shortener (held out)',
    expected: 'needs_human',
    heldOut: true,
    input: pitch(
      'Great article!',
      'Hi, great article on herb spirals. We have a related guide you might want to link to: https://bit.ly/3herbs. Would you add it?',
      ask('https://bit.ly/3herbs'),
      'info@herbs-world.com',
      null,
    ),
  },
  {
    name: 'thread: how much budget, phrased differently (held out)',
    expected: 'needs_human',
    heldOut: true,
    input: reply('Sounds good in principle. How much do you usually ask for this kind of placement?'),
  },

  // --- accept: simple thanks on the thread ---
  { name: 'thread: thanks, sounds great', expected: 'accept', input: reply('Thanks, sounds great!') },
  { name: 'thread: perfect, looking forward', expected: 'accept', input: reply('Perfect, thank you so much Anna. Looking forward to seeing it live.') },
  { name: 'thread: awesome, appreciate it (held out)', expected: 'accept', heldOut: true, input: reply('Awesome, appreciate it! Cheers, Tom') },
  { name: 'thread: thanks above a quoted earlier reply', expected: 'accept', input: reply(`Great, thanks a lot!\n\n${OUR_EARLIER_REPLY}`) },

  // --- opt_out: the prospect asks not to be contacted ---
  { name: 'remove me from your mailing list', expected: 'opt_out', input: reply('Please remove me from your mailing list.') },
  { name: 'STOP', expected: 'opt_out', input: reply('STOP') },
  { name: 'stop emailing me, angry', expected: 'opt_out', input: reply('Stop emailing me. I never asked for this.') },
  { name: 'do not contact me again', expected: 'opt_out', input: reply('Do not contact me again.') },
  { name: 'not interested, please stop', expected: 'opt_out', input: reply('Not interested, please stop.') },
  { name: 'subject unsubscribe, empty body', expected: 'opt_out', input: reply('', null, 'Unsubscribe') },
  { name: 'take me off your list (held out)', expected: 'opt_out', heldOut: true, input: reply('Take me off your list, thanks.') },
  { name: 'German: no more emails', expected: 'opt_out', input: reply('Bitte keine weiteren E-Mails mehr an diese Adresse.') },
  { name: 'French: do not contact me any more', expected: 'opt_out', input: reply('Merci de ne plus me contacter.') },
  { name: 'Spanish: stop writing to me', expected: 'opt_out', input: reply('Por favor, dejen de escribirme.') },
  {
    name: 'GDPR erasure request',
    expected: 'opt_out',
    input: reply('Under GDPR, please delete my email address from your records and do not contact me.'),
  },
  {
    name: 'opt-out beats a legal threat',
    expected: 'opt_out',
    input: reply('Stop emailing me or I will report you for spam and involve my lawyer.'),
  },
  {
    name: 'opt-out in a fresh inbound message (held out)',
    expected: 'opt_out',
    heldOut: true,
    input: pitch('Your emails', "I keep getting messages from your site. I don't want to receive any more emails from you, opt me out.", null, 'someone@mail.com', null),
  },
  // --- added after probing the first rules with fresh phrasings (each one was misread then) ---
  { name: 'thread: stopped emailing, in the past tense', expected: 'opt_out', input: reply("I'd appreciate it if you stopped emailing me.") },
  {
    name: 'pitch ending in the bare link text of a mailer footer',
    expected: 'accept',
    input: pitch(
      'Rose guide',
      'Hi, our guide https://rosecare.io/guide would be a great resource for your article on roses. Would you consider adding it?\n\nBest, Jo\n\nUnsubscribe',
      ask('https://rosecare.io/guide'),
      'jo@rosecare.io',
      'Jo',
    ),
  },
  { name: 'asking the cost of a link insertion', expected: 'decline', input: pitch('Link', 'Can you tell me the cost of a link insertion in your rose article?', null, 'x@links.biz', null) },
  { name: 'thread: polite withdrawal', expected: 'decline', input: reply('Thank you, but we decided to go another way.') },
  // Words of prohibited niches used innocently: no decline.
  {
    name: "'betting' as a figure of speech",
    expected: 'accept',
    input: pitch('Composting guide', "Hi, I'm betting your readers would love our guide to composting at https://compostco.io/guide. Would you consider linking to it?", ask('https://compostco.io/guide'), 'liz@compostco.io', 'Liz'),
  },
  {
    name: 'weed control on a gardening blog',
    expected: 'accept',
    input: pitch('Weed control resource', 'We made a weed control guide for organic gardens: https://weedfree.io/guide. Could you add a link in your mulching article?', ask('https://weedfree.io/guide'), 'max@weedfree.io', 'Max'),
  },
];
