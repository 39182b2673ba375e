import type { MetadataDocumentClient } from '../domain/clientMetadataDocument.ts';

/** Why a client metadata document cannot be used; the message is shown to the person or the client. */
export class ClientMetadataError extends Error {
  override readonly name = 'ClientMetadataError';
}

/** Fetches, validates and caches Client ID Metadata Documents. */
export interface ClientMetadataSource {
  /** The client the document at `clientId` describes; throws ClientMetadataError when it cannot be used. */
  load(clientId: string): Promise<MetadataDocumentClient>;
  close(): Promise<void>;
}
