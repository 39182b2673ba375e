import { serveTimedWork } from '../../lib/timedWorkers.ts';
import { readInboundMail } from './inboundMail.ts';

/** A forwarding mailbox's parsing thread (started by startTimedWorkers). */
serveTimedWork(({ raw, reportsOnly }: { raw: Uint8Array; reportsOnly: boolean }) => readInboundMail(raw, reportsOnly));
