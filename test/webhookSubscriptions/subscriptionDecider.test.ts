import t from 'tap';
import {
  SubscriptionRuleError,
  type WebhookSubscriptionCommand,
  type WebhookSubscriptionEvent,
  webhookSubscriptionDecider,
} from '../../src/domain/webhookSubscription.ts';
import { given } from '../helpers/givenWhenThen.ts';

const now = '2026-01-15T12:00:00.000Z';
const later = '2026-01-15T12:05:00.000Z';
const fields = {
  subscriptionId: 'W1',
  teamId: 'T1',
  siteId: 'S1',
  label: 'crm',
  url: 'https://example.com/hook',
  eventTypes: ['outreach.reply_sent' as const, 'outreach.message_received' as const],
  secretPrefix: 'svc_wh_abcd…',
  sealedSecret: 'v1.iv.tag.ciphertext',
  createdByOauthClientId: null,
};
const SubscriptionCreated: WebhookSubscriptionEvent = { type: 'SubscriptionCreated', data: { ...fields, createdAt: now } };
const SubscriptionDeleted: WebhookSubscriptionEvent = { type: 'SubscriptionDeleted', data: { subscriptionId: 'W1', siteId: 'S1', deletedAt: later } };
const create: WebhookSubscriptionCommand = { type: 'CreateSubscription', data: { ...fields, now } };
const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as SubscriptionRuleError).reason;
  }
  return 'no error';
};
const remove = (siteId = 'S1'): WebhookSubscriptionCommand => ({ type: 'DeleteSubscription', data: { subscriptionId: 'W1', siteId, now: later } });

t.test('CreateSubscription', async (t) => {
  t.test('given no subscription, when CreateSubscription, then SubscriptionCreated', async () => {
    given(webhookSubscriptionDecider, []).when(create).then([SubscriptionCreated]);
  });
  t.test('an OAuth-created subscription records its client', async () => {
    given(webhookSubscriptionDecider, [])
      .when({ type: 'CreateSubscription', data: { ...fields, createdByOauthClientId: 'svc_client', now } })
      .then([{ type: 'SubscriptionCreated', data: { ...fields, createdByOauthClientId: 'svc_client', createdAt: now } }]);
  });
  t.test('given a subscription, when CreateSubscription with its id, then it is refused (exists)', async (t) => {
    given(webhookSubscriptionDecider, [SubscriptionCreated]).when(create).thenThrows(SubscriptionRuleError, /already exists/);
    t.equal(reasonOf(() => webhookSubscriptionDecider.decide(create, { status: 'active', siteId: 'S1', label: 'crm', url: fields.url, eventTypes: fields.eventTypes, sealedSecret: fields.sealedSecret, graceUntil: null })), 'exists');
  });
  t.test('given a deleted subscription, when CreateSubscription with its id, then it is refused (ids are not reused)', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated, SubscriptionDeleted]).when(create).thenThrows(SubscriptionRuleError);
  });
});

t.test('DeleteSubscription', async (t) => {
  t.test('given a subscription, when DeleteSubscription on its site, then SubscriptionDeleted', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated]).when(remove()).then([SubscriptionDeleted]);
  });
  t.test('given no subscription, when DeleteSubscription, then not_found', async (t) => {
    given(webhookSubscriptionDecider, []).when(remove()).thenThrows(SubscriptionRuleError, /not found/);
    t.equal(reasonOf(() => webhookSubscriptionDecider.decide(remove(), { status: 'none' })), 'not_found');
  });
  t.test('given a subscription of another site, when DeleteSubscription, then not_found (its existence is not revealed)', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated]).when(remove('S2')).thenThrows(SubscriptionRuleError, /not found/);
  });
  t.test('given a deleted subscription, when DeleteSubscription again, then not_found', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated, SubscriptionDeleted]).when(remove()).thenThrows(SubscriptionRuleError, /not found/);
  });
});

const update = (changes: Record<string, unknown>, siteId = 'S1'): WebhookSubscriptionCommand => ({ type: 'UpdateSubscription', data: { subscriptionId: 'W1', siteId, changes, now: later } });

t.test('UpdateSubscription', async (t) => {
  t.test('given a subscription, when UpdateSubscription, then SubscriptionUpdated with the whole result', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated])
      .when(update({ url: 'https://example.org/v2' }))
      .then([{ type: 'SubscriptionUpdated', data: { subscriptionId: 'W1', siteId: 'S1', label: 'crm', url: 'https://example.org/v2', eventTypes: fields.eventTypes, updatedAt: later } }]);
  });
  t.test('the same values (event types in another order) change nothing: no event', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated]).when(update({ label: 'crm', eventTypes: [...fields.eventTypes].reverse() })).then([]);
  });
  t.test('another site, a deleted or a missing subscription: not_found', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated]).when(update({ label: 'x' }, 'S2')).thenThrows(SubscriptionRuleError, /not found/);
    given(webhookSubscriptionDecider, [SubscriptionCreated, SubscriptionDeleted]).when(update({ label: 'x' })).thenThrows(SubscriptionRuleError, /not found/);
    given(webhookSubscriptionDecider, []).when(update({ label: 'x' })).thenThrows(SubscriptionRuleError, /not found/);
  });
});

const rotate = (graceSeconds: number): WebhookSubscriptionCommand => ({
  type: 'RotateSubscriptionSecret',
  data: { subscriptionId: 'W1', siteId: 'S1', secretPrefix: 'svc_wh_wxyz…', sealedSecret: 'v1.new', graceSeconds, now: later },
});

t.test('RotateSubscriptionSecret', async (t) => {
  t.test('with a grace: the previous sealed secret and when it stops signing', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated])
      .when(rotate(3600))
      .then([
        {
          type: 'SubscriptionSecretRotated',
          data: { subscriptionId: 'W1', siteId: 'S1', secretPrefix: 'svc_wh_wxyz…', sealedSecret: 'v1.new', previousSealedSecret: fields.sealedSecret, previousSecretExpiresAt: '2026-01-15T13:05:00.000Z', rotatedAt: later },
        },
      ]);
  });
  t.test('a second rotation retires the secret the first one installed', async () => {
    const first: WebhookSubscriptionEvent = {
      type: 'SubscriptionSecretRotated',
      data: { subscriptionId: 'W1', siteId: 'S1', secretPrefix: 'svc_wh_1…', sealedSecret: 'v1.first', previousSealedSecret: null, previousSecretExpiresAt: null, rotatedAt: now },
    };
    given(webhookSubscriptionDecider, [SubscriptionCreated, first])
      .when(rotate(60))
      .then([
        {
          type: 'SubscriptionSecretRotated',
          data: { subscriptionId: 'W1', siteId: 'S1', secretPrefix: 'svc_wh_wxyz…', sealedSecret: 'v1.new', previousSealedSecret: 'v1.first', previousSecretExpiresAt: '2026-01-15T12:06:00.000Z', rotatedAt: later },
        },
      ]);
  });
  t.test('grace 0: no previous secret', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated])
      .when(rotate(0))
      .then([{ type: 'SubscriptionSecretRotated', data: { subscriptionId: 'W1', siteId: 'S1', secretPrefix: 'svc_wh_wxyz…', sealedSecret: 'v1.new', previousSealedSecret: null, previousSecretExpiresAt: null, rotatedAt: later } }]);
  });
  t.test('a grace over 24 hours is refused', async () => {
    given(webhookSubscriptionDecider, [SubscriptionCreated]).when(rotate(86_401)).thenThrows(SubscriptionRuleError, /graceSeconds/);
  });
});
