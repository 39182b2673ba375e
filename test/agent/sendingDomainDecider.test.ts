import t from 'tap';
import {
  type SendingDomainVerificationCommand,
  type SendingDomainVerificationEvent,
  SendingDomainVerificationRuleError,
  sendingDomainVerificationDecider as decider,
} from '../../src/domain/sendingDomainVerification.ts';
import { given } from '../helpers/givenWhenThen.ts';

const issuedAt = '2026-01-15T12:00:00.000Z';
const now = '2026-01-15T12:10:00.000Z';
const TOKEN = '0123456789abcdef0123456789abcdef';
const OTHER = 'fedcba9876543210fedcba9876543210';

const issue = (token = TOKEN, domain = 'example.test'): SendingDomainVerificationCommand => ({
  type: 'IssueVerificationToken',
  data: { siteId: 'S1', domain, token, now: issuedAt },
});
const issued = (token = TOKEN): SendingDomainVerificationEvent => ({
  type: 'SendingDomainTokenIssued',
  data: {
    siteId: 'S1',
    domain: 'example.test',
    token,
    recordName: '_outreach-verification.example.test',
    recordValue: `outreach-verification=${token}`,
    issuedAt,
  },
});
const check = (txtRecords: string[][], domain = 'example.test'): SendingDomainVerificationCommand => ({
  type: 'CheckSendingDomain',
  data: { siteId: 'S1', domain, now, txtRecords },
});
const verified: SendingDomainVerificationEvent = {
  type: 'SendingDomainVerified',
  data: { siteId: 'S1', domain: 'example.test', method: 'dns', verifiedAt: now },
};
const failed = (reason: 'no_token_issued' | 'record_missing' | 'record_mismatch' | 'dns_error', domain = 'example.test'): SendingDomainVerificationEvent => ({
  type: 'SendingDomainCheckFailed',
  data: { siteId: 'S1', domain, reason, checkedAt: now },
});

t.test('IssueVerificationToken', async (t) => {
  t.test('given nothing, when a token is issued, then SendingDomainTokenIssued names the TXT record at _outreach-verification.<domain>', async () => {
    given(decider, []).when(issue()).then([issued()]);
  });
  t.test('given an issued token, when another is issued, then it replaces the first', async (t) => {
    const state = given(decider, [issued()]).when(issue(OTHER)).then([issued(OTHER)]);
    t.match(state, { status: 'issued', token: OTHER, verified: false });
    given(decider, [issued(), issued(OTHER)]).when(check([[`outreach-verification=${TOKEN}`]])).then([failed('record_mismatch')]);
  });
  t.test('given nothing, when the token is short or holds characters unfit for DNS, then it is refused', async () => {
    given(decider, []).when(issue('abc')).thenThrows(SendingDomainVerificationRuleError, /token/);
    given(decider, []).when(issue('0123456789abcdef "; x')).thenThrows(SendingDomainVerificationRuleError, /token/);
  });
});

t.test('CheckSendingDomain', async (t) => {
  t.test('given no token, when checked, then SendingDomainCheckFailed no_token_issued', async () => {
    given(decider, []).when(check([[`outreach-verification=${TOKEN}`]])).then([failed('no_token_issued')]);
  });
  t.test('given a token, when the exact record is among other TXT records, then SendingDomainVerified by dns', async (t) => {
    const state = given(decider, [issued()])
      .when(check([['v=spf1 -all'], [`outreach-verification=${TOKEN}`], ['google-site-verification=xyz']]))
      .then([verified]);
    t.match(state, { status: 'issued', verified: true });
  });
  t.test('given a token, when the record comes split into character-strings, then the chunks are joined and it verifies', async () => {
    given(decider, [issued()]).when(check([['outreach-verification=', TOKEN.slice(0, 10), TOKEN.slice(10)]])).then([verified]);
  });
  t.test('given a token, when there are no TXT records, then record_missing', async () => {
    given(decider, [issued()]).when(check([])).then([failed('record_missing')]);
  });
  t.test('given a token, when only unrelated TXT records exist, then record_missing', async () => {
    given(decider, [issued()]).when(check([['v=spf1 include:_spf.example.test ~all']])).then([failed('record_missing')]);
  });
  t.test('given a token, when the record holds another token, then record_mismatch', async () => {
    given(decider, [issued()]).when(check([[`outreach-verification=${OTHER}`]])).then([failed('record_mismatch')]);
  });
  t.test('given a token, when the record only nearly matches (case, spaces, quotes, prefix), then it does not verify', async () => {
    for (const value of [`outreach-verification=${TOKEN.toUpperCase()}`, ` outreach-verification=${TOKEN}`, `outreach-verification=${TOKEN} `, `"outreach-verification=${TOKEN}"`]) {
      const decided = decider.decide(check([[value]]), decider.evolve(decider.initialState(), issued()));
      t.equal(decided[0]!.type, 'SendingDomainCheckFailed', value);
    }
  });
  t.test('given a token, when the lookup failed, then dns_error', async () => {
    given(decider, [issued()])
      .when({ type: 'CheckSendingDomain', data: { siteId: 'S1', domain: 'example.test', now, dnsError: 'ESERVFAIL' } })
      .then([failed('dns_error')]);
  });
  t.test('given a token for another domain, when this domain is checked, then no_token_issued', async () => {
    given(decider, [issued()]).when(check([[`outreach-verification=${TOKEN}`]], 'other.test')).then([failed('no_token_issued', 'other.test')]);
  });
  t.test('given a verified domain, when a later check fails, then it is recorded and the verification stays', async (t) => {
    const state = given(decider, [issued(), verified]).when(check([])).then([failed('record_missing')]);
    t.match(state, { verified: true });
  });
  t.test('given a verified domain, when checked again, then verified again (a repeated success is recorded too)', async () => {
    given(decider, [issued(), verified]).when(check([[`outreach-verification=${TOKEN}`]])).then([verified]);
  });
});
