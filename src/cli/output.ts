import { InvalidArgumentError, Option } from 'commander';
import { hasDomainLabels } from '../domain/domainName.ts';

/** Every command prints one JSON object with --json, or a short human line without. */
export function print(json: boolean, value: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? JSON.stringify(value) + '\n' : human + '\n');
}

/** Option parsers: a refusal is commander's InvalidArgumentError, printed as one line with the usage, never a stack. */
export function parseBool(name: string) {
  return (value: string): boolean => {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new InvalidArgumentError(`${name} must be true or false`);
  };
}

export function parseChoice<T extends string>(name: string, choices: readonly T[]) {
  return (value: string): T => {
    if ((choices as readonly string[]).includes(value)) return value as T;
    throw new InvalidArgumentError(`${name} must be one of ${choices.join(', ')}`);
  };
}

/**
 * An option that takes one of `choices`: its help lists them (`describe` words the line around the
 * list, by default "one of: …"), and any other value is refused naming them.
 */
export function choiceOption<T extends string>(flags: string, choices: readonly T[], describe = (list: string) => `one of: ${list}`): Option {
  return new Option(flags, describe(choices.join(', '))).argParser(parseChoice(flags.split(' ')[0]!, choices));
}

/** A whole number written in decimal digits, else NaN: `Number()` also reads `0x10`, `1e3` and blanks as numbers. */
export const decimal = (value: string): number => (/^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN);

export function parseNonNegativeInt(name: string) {
  return (value: string): number => {
    const n = decimal(value);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

/** A whole-number option from `min` (to `max`, when given), refused while the arguments are parsed, before any store is opened. */
export function parseWholeNumber(flag: string, min: number, max?: number) {
  return (value: string): number => {
    const n = decimal(value);
    if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
      throw new InvalidArgumentError(`${flag} must be a whole number from ${min}${max === undefined ? '' : ` to ${max}`}`);
    }
    return n;
  };
}

/** A site's domain name: LDH labels (letters, digits, hyphens; IDNs in their xn-- form), at least two of them, the last not all digits. */
export function parseDomain(name: string) {
  return (value: string): string => {
    const domain = value.trim().toLowerCase().replace(/\.$/, '');
    if (!hasDomainLabels(domain, 2) || /^[0-9]+$/.test(domain.split('.').at(-1)!)) {
      throw new InvalidArgumentError(`${name} must be a domain name such as example.com (no scheme, path or port)`);
    }
    return domain;
  };
}

/** JSON lines for auditors: positions and revisions as strings, so no precision is lost; data and metadata redacted. */
export function eventLine(event: { position: bigint; revision: bigint; streamId: string; type: string; createdAt: Date; data: unknown; metadata: unknown }) {
  return JSON.stringify({
    position: event.position.toString(),
    stream: event.streamId,
    revision: event.revision.toString(),
    type: event.type,
    time: event.createdAt.toISOString(),
    data: redact(event.data),
    // Who acted (`actor`, `actorKind`) and the ingestion or worker an event belongs to.
    metadata: redact(event.metadata),
  });
}

/**
 * Password hashes and sealed secrets stay in the store but never reach an auditor's terminal:
 * a password hash can be attacked offline, and a sealed secret is useless to read. Hashes of random
 * tokens are kept: they are safe and let auditors correlate a token's issue, use and revocation.
 */
const REDACTED_FIELDS = new Set(['passwordHash', 'sealedSecret', 'previousSealedSecret', 'sealedProbe']);

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, REDACTED_FIELDS.has(k) && v !== null ? '[redacted]' : redact(v)]),
  );
}
