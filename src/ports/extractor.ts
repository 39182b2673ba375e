import type { Ask } from '../domain/ingestion.ts';

export interface ExtractionInput {
  subject: string;
  bodyText: string;
  from: string;
  /** The receiving site's domain: links on it are where the sender wants a link placed (the source). */
  siteDomain: string;
}

/** Pulls the link-building asks out of a pitch. An empty list means the pitch is not actionable. */
export interface Extractor {
  readonly name: string;
  extract(input: ExtractionInput): Promise<ExtractionOutcome>;
}

export interface ExtractionOutcome {
  asks: Ask[];
  /** Which extractor produced the asks (recorded on the message, for audits). */
  extractor: string;
}
