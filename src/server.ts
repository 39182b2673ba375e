import Fastify from 'fastify';
import { app } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { serverOptions } from './http/serverOptions.ts';
import { requestLogSerializer } from './http/logRedaction.ts';
import { createServices } from './services.ts';
import { startWebhookWorker } from './processors/webhookDelivery/startWorker.ts';
import { startForwardingMailbox } from './processors/forwardingMailbox.ts';
import { startAgentWorker } from './processors/agent/startAgentWorker.ts';
import { startProjections } from './projections/startProjections.ts';
import { startAgentRunner } from './processors/agentRuns/startAgentRunner.ts';
import { exitGracefullyOnSignals } from './lifecycle/shutdown.ts';

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
  const fastify = Fastify({
    ...serverOptions(config),
    logger: { level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'req.headers.cookie'], serializers: { req: requestLogSerializer } },
  });
  const services = await createServices(config, {
    onProjectionError: (err) => fastify.log.error({ err }, 'projection failed'),
    onExtractorError: (err) => fastify.log.warn({ err }, 'language-model extractor failed; used the offline extractor'),
  });
  const projections = config.RUN_PROJECTIONS ? startProjections(services, (err) => fastify.log.error({ err }, 'projection failed')) : null;
  await fastify.register(app, { services });
  const webhooks = config.RUN_WEBHOOKS
    ? await startWebhookWorker(services, fastify.log, { onAttempt: (status) => fastify.metrics.deliveryAttempted(status) })
    : null;
  const agent = config.RUN_AGENT ? await startAgentWorker(services, fastify.log) : null;
  // The agents' work comes from services.agentWork (src/agentWorkWiring.ts).
  const agentRunner = config.RUN_AGENT_RUNNER ? await startAgentRunner(services, fastify.log) : null;
  // The forwarding mailbox (SMTP), off unless SMTP_ENABLED=true.
  const mailbox = config.SMTP_ENABLED
    ? await startForwardingMailbox(services, {
        host: config.SMTP_HOST,
        port: config.SMTP_PORT,
        mailDomain: config.MAIL_DOMAIN,
        maxMessageBytes: config.SMTP_MAX_MESSAGE_BYTES,
        onError: (err) => fastify.log.error({ err }, 'forwarding mailbox failed'),
      })
    : null;
  if (mailbox) fastify.log.info({ port: mailbox.port }, 'forwarding mailbox listening');

  fastify.metrics.sources.webhooks = webhooks ?? undefined;
  fastify.metrics.sources.agent = agent?.worker;
  exitGracefullyOnSignals({
    fastify,
    roles: [
      ...(mailbox ? [{ name: 'forwarding mailbox', stop: () => mailbox.close() }] : []),
      ...(webhooks ? [{ name: 'webhook delivery', stop: (drainMs: number) => webhooks.stop(drainMs) }] : []),
      ...(agent ? [{ name: 'agent', stop: () => agent.stop() }] : []),
      ...(agentRunner ? [{ name: 'agent runner', stop: () => agentRunner.stop() }] : []),
      ...(projections ? [{ name: 'projections', stop: () => projections.stop() }] : []),
    ],
    closeServices: () => services.close(),
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    log: fastify.log,
  });

  await fastify.listen({ port: config.PORT, host: config.HOST });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
