import Fastify from 'fastify';
import { app } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { serverOptions } from './http/serverOptions.ts';
import { requestLogSerializer } from './http/logRedaction.ts';
import { createServices } from './services.ts';
import { startForwardingMailbox } from './processors/forwardingMailbox.ts';
import { startBackgroundRoles } from './processors/startBackgroundRoles.ts';
import { startProjections } from './projections/startProjections.ts';
import { FOLLOW_EVERY_MS, followStoredCheckpoints } from './projections/followStoredCheckpoints.ts';
import { type ShutdownDeps, exitGracefullyOnSignals, gracefulShutdown } from './lifecycle/shutdown.ts';
import { assertSecretKeyOpens } from './lifecycle/secretKeyCheck.ts';
import { assertPortFree, portInUse, startupFailure } from './lifecycle/startupFailure.ts';

/** Starts the API and, in the embedded default, every background role in the same process. */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  await assertPortFree(config.HOST, config.PORT);
  if (config.SMTP_ENABLED) await assertPortFree(config.SMTP_HOST, config.SMTP_PORT, { host: 'SMTP_HOST', port: 'SMTP_PORT' });
  const fastify = Fastify({
    ...serverOptions(config),
    logger: { level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'req.headers.cookie'], serializers: { req: requestLogSerializer } },
  });
  const services = await createServices(config, {
    onProjectionError: (err) => fastify.log.error({ err }, 'projection failed'),
    onExtractorError: (err) => fastify.log.warn({ err }, 'language-model extractor failed; used the offline extractor'),
  });
  await assertSecretKeyOpens(services);
  const projections = config.RUN_PROJECTIONS ? startProjections(services, (err) => fastify.log.error({ err }, 'projection failed')) : null;
  const following = projections ? null : followStoredCheckpoints(services.projections, FOLLOW_EVERY_MS, (err) => fastify.log.error({ err }, 'following the stored checkpoints failed'));
  await fastify.register(app, { services });
  const shutdown: ShutdownDeps = {
    fastify,
    // Each role is added once it runs: a signal during the start stops what started.
    roles: [
      ...(projections ? [{ name: 'projections', stop: () => projections.stop() }] : []),
      ...(following ? [{ name: 'checkpoint follower', stop: () => following.stop() }] : []),
    ],
    closeServices: () => services.close(),
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    log: fastify.log,
  };
  exitGracefullyOnSignals(shutdown);

  // Listening before the background roles start: a start that lost a race for the port (the check
  // above passed for both) stops before its workers and mailbox ran beside the other's.
  try {
    await fastify.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    console.error(startupFailure(taken ? portInUse('PORT', config.HOST, config.PORT, error) : error));
    await gracefulShutdown(shutdown).catch(() => {});
    process.exit(1);
  }
  // PORT=0 took a free port: the default public address names it (OAuth issuer, MCP resource).
  if (!process.env.PUBLIC_BASE_URL?.trim() && config.PORT === 0) {
    const address = fastify.server.address();
    if (address && typeof address === 'object') config.PUBLIC_BASE_URL = `http://localhost:${address.port}`;
  }

  // The webhook delivery worker, the Outreach Agent and the agent runner: their own thread by default (WORKERS_IN_THREAD).
  const background = await startBackgroundRoles(services, projections, {
    log: fastify.log,
    onAttempt: (status) => fastify.metrics.deliveryAttempted(status),
  });
  shutdown.roles.unshift(...background.roles);
  fastify.log.info({ projections: projections?.mode ?? 'off', workers: background.mode }, 'background roles started');
  // The forwarding mailbox (SMTP), off unless SMTP_ENABLED=true.
  const mailbox = config.SMTP_ENABLED
    ? await startForwardingMailbox(services, {
        host: config.SMTP_HOST,
        port: config.SMTP_PORT,
        mailDomain: config.MAIL_DOMAIN,
        maxMessageBytes: config.SMTP_MAX_MESSAGE_BYTES,
        maxBodyChars: config.INGESTION_BODY_LIMIT_BYTES,
        limits: {
          maxClients: config.SMTP_MAX_CLIENTS,
          maxClientsPerAddress: config.SMTP_MAX_CLIENTS_PER_ADDRESS,
          socketTimeoutMs: config.SMTP_SOCKET_TIMEOUT_MS,
          maxRecipients: config.SMTP_MAX_RECIPIENTS,
        },
        parseThreads: config.SMTP_PARSE_THREADS,
        parseTimeoutMs: config.SMTP_PARSE_TIMEOUT_MS,
        onError: (err) => fastify.log.error({ err }, 'forwarding mailbox failed'),
        onCopyRefused: (refusal) => fastify.log.info(refusal, "forwarding mailbox: a site's copy of a mail was refused"),
        onClientError: (err) => fastify.log.info({ err: { message: err instanceof Error ? err.message : String(err) } }, 'forwarding mailbox: a connection failed on its client side'),
      })
    : null;
  if (mailbox) {
    shutdown.roles.unshift({ name: 'forwarding mailbox', stop: () => mailbox.close() });
    fastify.log.info({ port: mailbox.port }, 'forwarding mailbox listening');
  }

  fastify.metrics.sources.webhooks = background.sources.webhooks;
  fastify.metrics.sources.agent = background.sources.agent;
}

main().catch((error) => {
  console.error(startupFailure(error));
  process.exit(1);
});
