import { type KeyObject, createSecretKey } from 'node:crypto';
import type { SubscriptionFields } from '../../domain/webhookSubscription.ts';
import type { Document } from '../../ports/readModelStore.ts';
import type { SecretBox } from '../../ports/secretBox.ts';

/** A subscription as the worker sees it: where to send, which types, and whether it still receives. */
export interface Target {
  id: string;
  /** Whose deliveries these are: the unit of fairness in the scheduler. */
  teamId: string;
  siteId: string;
  url: string;
  eventTypes: Set<string>;
  sealedSecret: string;
  /** A rotated-out secret that still signs (a second `v1=`) until `previousSecretExpiresAt` (epoch ms). */
  previousSealedSecret: string | null;
  previousSecretExpiresAt: number | null;
  active: boolean;
}

/** The worker's own copy of its targets, kept with its checkpoint (see `dispatcher.ts`). */
export const TARGETS = 'webhookDispatchTargets';

export interface TargetDoc extends Document {
  /** Absent in documents stored before teams were recorded here. */
  team_id?: string;
  site_id: string;
  url: string;
  event_types: string[];
  sealed_secret: string;
  /** Absent in documents stored before secret rotation. */
  previous_sealed_secret?: string | null;
  previous_secret_expires_at?: number | null;
  active: boolean;
}

export function targetOf(d: SubscriptionFields): Target {
  return { id: d.subscriptionId, teamId: d.teamId, siteId: d.siteId, url: d.url, eventTypes: new Set(d.eventTypes), sealedSecret: d.sealedSecret, previousSealedSecret: null, previousSecretExpiresAt: null, active: true };
}

export function toDoc(t: Target): TargetDoc {
  return { id: t.id, team_id: t.teamId, site_id: t.siteId, url: t.url, event_types: [...t.eventTypes], sealed_secret: t.sealedSecret, previous_sealed_secret: t.previousSealedSecret, previous_secret_expires_at: t.previousSecretExpiresAt, active: t.active };
}

export function fromDoc(d: TargetDoc): Target {
  // An older document without its team: the site stands in for it (a site belongs to one team), which
  // keeps the fairness without replaying the log to fill it in.
  return { id: d.id, teamId: d.team_id ?? `site:${d.site_id}`, siteId: d.site_id, url: d.url, eventTypes: new Set(d.event_types), sealedSecret: d.sealed_secret, previousSealedSecret: d.previous_sealed_secret ?? null, previousSecretExpiresAt: d.previous_secret_expires_at ?? null, active: d.active };
}

/** The subscriptions this worker delivers to, by id and by site, with their opened signing secrets. */
export class Targets {
  private readonly byId = new Map<string, Target>();
  private readonly bySite = new Map<string, Set<string>>();
  private readonly secrets = new Map<string, KeyObject>();

  constructor(private readonly secretBox: SecretBox) {}

  get(id: string): Target | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  all(): IterableIterator<Target> {
    return this.byId.values();
  }

  /** Ids of the subscriptions of one site. */
  idsOfSite(siteId: string): ReadonlySet<string> | undefined {
    return this.bySite.get(siteId);
  }

  set(target: Target): void {
    this.byId.set(target.id, target);
    let ids = this.bySite.get(target.siteId);
    if (!ids) this.bySite.set(target.siteId, (ids = new Set()));
    ids.add(target.id);
  }

  remove(id: string): void {
    const target = this.byId.get(id);
    if (!target) return;
    this.byId.delete(id);
    this.bySite.get(target.siteId)?.delete(id);
    this.secrets.delete(id);
    this.secrets.delete(`${id}:previous`);
  }

  deactivate(id: string): Target | undefined {
    const target = this.byId.get(id);
    if (target) target.active = false;
    return target;
  }

  /** Forgets everything, the opened secrets too: what is loaded next may hold a rotation this copy never read. */
  clear(): void {
    this.byId.clear();
    this.bySite.clear();
    this.secrets.clear();
  }

  /** The subscription's signing key, opened once (and kept as a KeyObject: no key set-up per signature). */
  secretOf(target: Target): KeyObject {
    let secret = this.secrets.get(target.id);
    if (!secret) this.secrets.set(target.id, (secret = createSecretKey(Buffer.from(this.secretBox.open(target.sealedSecret), 'utf8'))));
    return secret;
  }

  /** The secrets a delivery is signed with at `nowMs`: the current one, and during a rotation's grace the previous one. */
  signingSecretsOf(target: Target, nowMs: number): KeyObject[] {
    const current = this.secretOf(target);
    if (!target.previousSealedSecret || target.previousSecretExpiresAt === null || nowMs >= target.previousSecretExpiresAt) return [current];
    const key = `${target.id}:previous`;
    let previous = this.secrets.get(key);
    if (!previous) this.secrets.set(key, (previous = createSecretKey(Buffer.from(this.secretBox.open(target.previousSealedSecret), 'utf8'))));
    return [current, previous];
  }

  /** A new secret (and a previous one in its grace) replaces the cached opened ones. */
  rotate(id: string, sealedSecret: string, previousSealedSecret: string | null, previousSecretExpiresAt: number | null): Target | undefined {
    const target = this.byId.get(id);
    if (!target) return undefined;
    target.sealedSecret = sealedSecret;
    target.previousSealedSecret = previousSealedSecret;
    target.previousSecretExpiresAt = previousSecretExpiresAt;
    this.secrets.delete(id);
    this.secrets.delete(`${id}:previous`);
    return target;
  }

  /** Where it sends and which types it takes, after an update. */
  update(id: string, url: string, eventTypes: readonly string[]): Target | undefined {
    const target = this.byId.get(id);
    if (!target) return undefined;
    target.url = url;
    target.eventTypes = new Set(eventTypes);
    return target;
  }
}
