import { MongoError, MongoErrorLabel, MongoNetworkError, MongoNotConnectedError, MongoServerSelectionError } from 'mongodb';
import { treatAsUnavailable } from '../../ports/storeUnavailable.ts';

/**
 * MongoDB unreachable, no primary to select (a failover), or an error the server itself labels as
 * worth retrying. The driver has already retried a retryable read or write once when this reaches us.
 */
export const isMongoUnavailable = (error: unknown): boolean =>
  error instanceof MongoNetworkError ||
  error instanceof MongoServerSelectionError ||
  error instanceof MongoNotConnectedError ||
  (error instanceof MongoError &&
    (error.hasErrorLabel(MongoErrorLabel.RetryableWriteError) || error.hasErrorLabel(MongoErrorLabel.TransientTransactionError)));

treatAsUnavailable(isMongoUnavailable);
