import type { MetadataDocumentClient } from '../domain/clientMetadataDocument.ts';

/** Why a client metadata document cannot be used; the message is shown to the person or the client. */
export class ClientMetadataError extends Error {
  override readonly name = 'ClientMetadataError';
  /**
   * Nothing answered (a name that does not resolve, a refused address, a refused connection, a
   * timeout): the message names which for the operator's logs and tests, but an anonymous caller
   * must not learn it (what a host name resolves to inside the network).
   */
  readonly unreachable: boolean;
  constructor(message: string, options: { unreachable?: boolean } = {}) {
    super(message);
    this.unreachable = options.unreachable ?? false;
  }

  /** What follows "The client metadata document" for a caller who may be anyone: the reason, unless nothing answered. */
  forCaller(): string {
    return this.unreachable ? 'could not be fetched' : `cannot be used: ${this.message}`;
  }
}

/** Fetches, validates and caches Client ID Metadata Documents. */
export interface ClientMetadataSource {
  /** The client the document at `clientId` describes; throws ClientMetadataError when it cannot be used. */
  load(clientId: string): Promise<MetadataDocumentClient>;
  close(): Promise<void>;
}
