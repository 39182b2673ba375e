/**
 * The secret key's probe: a known text sealed under the key by the first process that starts on an
 * event log. Every later start of any role opens it, so a process with another key (a lost
 * `secret.key`, a `SECRET_KEY` that differs) refuses to start even while no webhook secret is sealed
 * yet: its bounce addresses would be refused, and what it seals would not open elsewhere. A probe is
 * recorded again only when an operator starts with `SECRET_KEY_CHECK=false` under a new key that
 * opens every webhook subscription's secret (src/lifecycle/secretKeyCheck.ts).
 */
export const SECRET_KEY_STREAM = 'secret_key';

export const SECRET_KEY_PROBE = 'outreach secret key probe';

export type SecretKeyEvent = { type: 'SecretKeyProbeRecorded'; data: { sealedProbe: string; occurredAt: number } };

/** Whether `open` (the process's key) opens a sealed probe to the probe's text. */
export function keyOpensProbe(open: (sealed: string) => string, sealedProbe: string): boolean {
  try {
    return open(sealedProbe) === SECRET_KEY_PROBE;
  } catch {
    return false;
  }
}
