/** RFC 6749 §5.2 token-endpoint errors, answered as OAuth JSON, never in the API envelope. */
export type TokenErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'temporarily_unavailable'
  | 'server_error';

export class OAuthError extends Error {
  constructor(
    readonly error: TokenErrorCode,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : error === 'server_error' ? 500 : error === 'temporarily_unavailable' ? 429 : 400,
    /** The client tried HTTP Basic: a 401 then carries a WWW-Authenticate challenge (RFC 6749 §5.2). */
    readonly basicChallenge = false,
  ) {
    super(description);
  }
}

export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** RFC 6749 §4.1.2.1 authorization-endpoint errors, sent to the redirect URI. */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'unauthorized_client'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'server_error';
