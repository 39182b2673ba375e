/** Every error the spec names, with one constructor each; the HTTP layer maps `status` and `code` as they are. */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'SITE_NOT_LICENSED'
  | 'INSUFFICIENT_SCOPE'
  | 'SITE_NOT_FOUND'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'CONFLICT'
  | 'SUBSCRIPTION_LIMIT_REACHED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const validationError = (message: string) => new ServiceError(400, 'VALIDATION_ERROR', message);
export const unauthorized = (message = 'Missing or invalid credentials.') => new ServiceError(401, 'UNAUTHORIZED', message);
export const insufficientScope = (scope: string) =>
  new ServiceError(403, 'INSUFFICIENT_SCOPE', `This credential lacks the required scope ${scope}.`);
export const siteNotLicensed = (status: 402 | 403, message = 'The site has no active licence.') =>
  new ServiceError(status, 'SITE_NOT_LICENSED', message);
export const siteNotFound = () => new ServiceError(404, 'SITE_NOT_FOUND', 'Site not found.');
export const notFound = (message = 'Not found.') => new ServiceError(404, 'NOT_FOUND', message);
export const rateLimited = (retryAfterSeconds: number, message = 'Rate limit exceeded.') =>
  new ServiceError(429, 'RATE_LIMITED', message, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
export const conflict = (message: string) => new ServiceError(409, 'CONFLICT', message);
export const subscriptionLimitReached = (limit: number) =>
  new ServiceError(409, 'SUBSCRIPTION_LIMIT_REACHED', `A site may have at most ${limit} webhook subscriptions; delete one before creating another.`);
export const serviceUnavailable = (message: string, retryAfterSeconds = 1) =>
  new ServiceError(503, 'SERVICE_UNAVAILABLE', message, { 'retry-after': String(retryAfterSeconds) });
