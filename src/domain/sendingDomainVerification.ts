import { type Decider, assertNever } from './decider.ts';

/**
 * Proof that a site controls the domain its replies are sent from: the service issues a random token,
 * the operator publishes it as a DNS TXT record, and a check finds it there. The proof lives on its own
 * stream; a successful check also sets the site's `sendingDomainVerified` setting (commands/sendingDomain.ts).
 */
export const sendingDomainVerificationStream = (siteId: string) => `sendingDomainVerification-${siteId}`;

export const VERIFICATION_RECORD_PREFIX = '_outreach-verification';
export const verificationRecordName = (domain: string) => `${VERIFICATION_RECORD_PREFIX}.${domain}`;
export const verificationRecordValue = (token: string) => `outreach-verification=${token}`;

export const CHECK_FAILURE_REASONS = ['no_token_issued', 'record_missing', 'record_mismatch', 'dns_error'] as const;
export type SendingDomainCheckFailureReason = (typeof CHECK_FAILURE_REASONS)[number];

export type SendingDomainVerificationEvent =
  | {
      type: 'SendingDomainTokenIssued';
      data: { siteId: string; domain: string; token: string; recordName: string; recordValue: string; issuedAt: string };
    }
  | { type: 'SendingDomainVerified'; data: { siteId: string; domain: string; method: 'dns'; verifiedAt: string } }
  | {
      type: 'SendingDomainCheckFailed';
      data: { siteId: string; domain: string; reason: SendingDomainCheckFailureReason; checkedAt: string };
    };

/** What the resolver answered for the record name: its TXT records (chunks per record, as node returns them) or a failure. */
export type TxtLookup = { txtRecords: string[][] } | { dnsError: string };

export type SendingDomainVerificationCommand =
  | { type: 'IssueVerificationToken'; data: { siteId: string; domain: string; token: string; now: string } }
  | { type: 'CheckSendingDomain'; data: { siteId: string; domain: string; now: string } & TxtLookup };

export type SendingDomainVerificationState =
  | { status: 'none' }
  | { status: 'issued'; domain: string; token: string; recordName: string; recordValue: string; verified: boolean };

export class SendingDomainVerificationRuleError extends Error {}

/** A TXT record longer than 255 bytes arrives as several character-strings; they form one value. */
const recordText = (chunks: string[]) => chunks.join('');

function checkOutcome(state: Extract<SendingDomainVerificationState, { status: 'issued' }>, lookup: TxtLookup) {
  if ('dnsError' in lookup) return 'dns_error' as const;
  const values = lookup.txtRecords.map(recordText);
  if (values.includes(state.recordValue)) return 'verified' as const;
  // A value with our prefix but another token is most often a stale record from an earlier token.
  return values.some((v) => v.startsWith(verificationRecordValue(''))) ? ('record_mismatch' as const) : ('record_missing' as const);
}

export const sendingDomainVerificationDecider: Decider<
  SendingDomainVerificationState,
  SendingDomainVerificationCommand,
  SendingDomainVerificationEvent
> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'SendingDomainTokenIssued': {
        const { domain, token, recordName, recordValue } = event.data;
        return { status: 'issued', domain, token, recordName, recordValue, verified: false };
      }
      case 'SendingDomainVerified':
        return state.status === 'issued' ? { ...state, verified: true } : state;
      case 'SendingDomainCheckFailed':
        // A failed check is a fact for auditors; it does not withdraw an earlier verification.
        return state;
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'IssueVerificationToken': {
        const { siteId, domain, token, now } = command.data;
        if (!/^[A-Za-z0-9_-]{16,}$/.test(token)) throw new SendingDomainVerificationRuleError('a verification token must be at least 16 URL-safe characters');
        return [
          {
            type: 'SendingDomainTokenIssued',
            data: { siteId, domain, token, recordName: verificationRecordName(domain), recordValue: verificationRecordValue(token), issuedAt: now },
          },
        ];
      }
      case 'CheckSendingDomain': {
        const { siteId, domain, now } = command.data;
        // A token issued for another domain proves nothing about this one.
        const outcome = state.status === 'issued' && state.domain === domain ? checkOutcome(state, command.data) : 'no_token_issued';
        if (outcome === 'verified') return [{ type: 'SendingDomainVerified', data: { siteId, domain, method: 'dns', verifiedAt: now } }];
        return [{ type: 'SendingDomainCheckFailed', data: { siteId, domain, reason: outcome, checkedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
