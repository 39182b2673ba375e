import { randomBytes } from 'node:crypto';
import { startSmtpSink, type SmtpSink } from '../agent/smtpSink.ts';
import { type TestApp, type Tenant, createTenant, startTestApp } from '../helpers/testApp.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { PASSWORD } from '../oauth/helpers.ts';

export interface InboxDashboard {
  app: TestApp;
  sink: SmtpSink;
  tenant: Tenant;
  ownerEmail: string;
  issuer: string;
  /** Ingests a pitch through the REST endpoint; returns its conversation's id. */
  pitch(body?: Record<string, unknown>, tenant?: Tenant): Promise<string>;
  /** Another team with its own owner (who can sign in) and site. */
  otherTeam(): Promise<{ tenant: Tenant; ownerEmail: string }>;
  close(): Promise<void>;
}

/** The service on a loopback port (issuer = that port), a person's replies going to a real SMTP sink, one tenant whose owner can sign in. */
export async function startInboxDashboard(): Promise<InboxDashboard> {
  const sink = await startSmtpSink();
  const app = await startTestApp({ listen: true, env: { OUTBOUND_SMTP_URL: sink.url } });
  (app.services.config as { PUBLIC_BASE_URL: string }).PUBLIC_BASE_URL = app.url;
  const newOwner = async () => {
    const ownerEmail = `owner-${randomBytes(4).toString('hex')}@example.test`;
    return { ownerEmail, tenant: await createTenant(app.services, { email: ownerEmail, password: PASSWORD, sendingDomainVerified: true }) };
  };
  const { ownerEmail, tenant } = await newOwner();
  return {
    app,
    sink,
    tenant,
    ownerEmail,
    issuer: app.url,
    async pitch(body = {}, who = tenant) {
      const res = await ingest(app.fastify, who, { ...PITCH, messageId: `<${randomBytes(6).toString('hex')}@prospect.io>`, ...body });
      if (res.statusCode !== 201) throw new Error(`ingestion failed: ${res.statusCode} ${res.body}`);
      await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
      return res.json().conversationIds[0];
    },
    otherTeam: newOwner,
    async close() {
      await app.close();
      await sink.close();
    },
  };
}

/** A subject and a sender an attacker controls. */
export const HOSTILE = {
  subject: '<script>alert("pwned")</script> & <b>bold</b>',
  fromName: '<img src=x onerror=alert(1)>',
  bodyText: 'Hello </pre><script>alert(2)</script> https://example.test/blog/seo-tips',
};
