import { validationError } from './domain/errors.ts';
import swagger from '@fastify/swagger';
import { type FastifyInstance, errorCodes } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { parseAllowedRanges } from './domain/destination.ts';
import { authenticate } from './http/authenticate.ts';
import { apiKeyResolver } from './http/credentials.ts';
import { cachedApiKeyResolver, cachedSiteLoader } from './http/credentialCache.ts';
import { credentialCatchUp } from './http/credentialsInForce.ts';
import { disconnectIfAuthorizerGone } from './http/oauth/departedAuthorizer.ts';
import { oauthAccessTokenResolver } from './http/oauth/accessTokenResolver.ts';
import { oauth } from './http/oauth/index.ts';
import { mcp } from './mcp/index.ts';
import { dashboard } from './http/dashboard/index.ts';
import { fromUtf8, refuseNonUtf8Bodies } from './http/charset.ts';
import { installErrorHandling } from './http/errorHandler.ts';
import { refuseWhileClosing } from './http/shuttingDown.ts';
import { healthRoutes } from './http/routes/health.ts';
import { metricsPlugin } from './http/metrics.ts';
import { webhookSubscriptionRoutes } from './http/routes/webhookSubscriptions.ts';
import { ingestionRoutes } from './http/routes/ingestion.ts';
import { conversationRoutes } from './http/routes/conversations.ts';
import { opportunityRoutes } from './http/routes/opportunities.ts';
import { articleRoutes } from './http/routes/articles.ts';
import { agentRoutes } from './http/routes/agents.ts';
import { suppressionRoutes } from './http/routes/suppressions.ts';
import { prospectRoutes } from './http/routes/prospects.ts';
import { conversationActionRoutes } from './http/routes/conversationActions.ts';
import { writeRateLimit } from './http/writeRateLimit.ts';
import { readYourWrites } from './http/readYourWrites.ts';
import { ingestionPortsPlugin } from './ingestionPorts.ts';
import { getSite } from './readModels/sites.ts';
import { type Services, servicesPlugin } from './services.ts';

export interface AppOptions {
  services: Services;
  /** Largest JSON body accepted, in bytes; larger bodies get 400 VALIDATION_ERROR. */
  bodyLimit?: number;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** The whole HTTP application as one plugin; `server.ts` only listens. */
export const app = fp(
  async (fastify: FastifyInstance, { services, bodyLimit = DEFAULT_BODY_LIMIT }: AppOptions) => {
    fastify.setValidatorCompiler(validatorCompiler);
    fastify.setSerializerCompiler(serializerCompiler);
    installErrorHandling(fastify, bodyLimit);
    // Before the other hooks, so that their refusals carry it too (see http/requestId.ts).
    fastify.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is refused with 400 (see serverOptions).
      if (request.headers.host === undefined && request.raw.httpVersion === '1.1') throw validationError('An HTTP/1.1 request needs a Host header.');
    });
    refuseWhileClosing(fastify);
    refuseNonUtf8Bodies(fastify);
    // The composition root: every port a route uses is a decoration of the app.
    await fastify.register(servicesPlugin, { services });
    await fastify.register(ingestionPortsPlugin, { services });
    await fastify.register(readYourWrites);

    // An empty body with a JSON content type (a DELETE, or a body-less POST such as take-over or an
    // agent run, from clients that always send the header) is no body, not an error: routes that need
    // a body still refuse it with 400 VALIDATION_ERROR through their schema.
    const parseJson = fastify.getDefaultJsonParser('error', 'error');
    fastify.removeContentTypeParser('application/json');
    fastify.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit },
      fromUtf8((request, text, done) => (text === '' ? done(null, undefined) : parseJson(request, text, done))),
    );
    // fastify parses text/plain by default: a JSON body sent as text reached the schema as a string
    // ("expected object, received string"). An empty one (fetch's `body: ''`) is still no body.
    const noneOrRefused = (_request: unknown, body: Buffer, done: (error: Error | null, body?: unknown) => void) =>
      body.length === 0 ? done(null, undefined) : done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined);
    fastify.removeContentTypeParser('text/plain');
    fastify.addContentTypeParser('text/plain', { parseAs: 'buffer', bodyLimit }, noneOrRefused);
    // Any other type, or none (a client's chunked DELETE with nothing in it sends no Content-Type):
    // refused as before, but an empty body is no body.
    fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, noneOrRefused);

    await fastify.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Outreach Integration Service', version: '1.0.0', description: 'REST API v1.' },
        servers: [{ url: fastify.config.PUBLIC_BASE_URL }],
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
        security: [{ bearer: [] }],
      },
      // OpenAPI 3.1 lets a non-OAuth scheme's requirement list roles: each operation names the scope it needs.
      transform: (input) => {
        const out = jsonSchemaTransform(input);
        const scope = input.route.config?.access?.scope;
        return scope ? { ...out, schema: { ...out.schema, security: [{ bearer: [scope] }] } } : out;
      },
      // The REST API's operations only (each has a tag): OAuth, MCP and the dashboard pages are described
      // by their own documents (RFC 8414 metadata, the MCP handshake), not as bearer-protected JSON operations.
      hideUntagged: true,
    });
    // The server URL as it is now (PORT=0 learns its port after the routes are registered).
    fastify.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => ({ ...fastify.swagger(), servers: [{ url: fastify.config.PUBLIC_BASE_URL }] }));

    // The REST answers carry a team's data, its contacts' personal data among it: no cache keeps them
    // (a route that says otherwise keeps its own).
    fastify.addHook('onSend', async (request, reply) => {
      if (request.url.startsWith('/api/v1/') && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    });

    await fastify.register(authenticate, {
      loadSite: cachedSiteLoader((siteId: string) => getSite(fastify.readModels, siteId), fastify.readModels),
    });
    // Credentials in force at once: the read models reach the store's head before a credential is trusted, cached or not.
    const catchUp = credentialCatchUp(fastify, fastify.config.CREDENTIAL_CATCH_UP_MS);
    fastify.decorate('credentialsInForce', catchUp);
    const apiKeys = cachedApiKeyResolver(
      apiKeyResolver(fastify, (error) => fastify.log.warn({ err: error }, 'recording API key use failed'), catchUp),
      fastify.readModels,
      () => fastify.clock.now().getTime(),
    );
    fastify.credentialResolvers.push({
      accepts: (token) => apiKeys.accepts(token),
      resolve: async (token) => {
        await catchUp();
        return apiKeys.resolve(token);
      },
    });
    fastify.credentialResolvers.push(
      oauthAccessTokenResolver(fastify, catchUp, (grantId) =>
        // The answer is 401 either way. A failed revocation is tried again at the app's next call; a sweep that
        // failed after it, by running `team remove-user` again.
        disconnectIfAuthorizerGone(fastify, grantId).catch((error: unknown) => fastify.log.warn({ err: error, grantId }, 'disconnecting an app whose authorizer left failed')),
      ),
    );
    // The write rate tier (60/min/team by default) on every /api/v1 write route; runs after authentication.
    await fastify.register(writeRateLimit, { limit: fastify.config.WRITE_RATE_LIMIT_PER_MINUTE });

    await fastify.register(metricsPlugin);
    await fastify.register(healthRoutes);
    // OAuth 2.1 authorization server and the dashboard: each its own scope, body parsers and error formats.
    await fastify.register(oauth);
    await fastify.register(dashboard);
    // The MCP endpoint (/mcp) and its protected-resource metadata.
    await fastify.register(mcp);
    await fastify.register(ingestionRoutes);
    await fastify.register(conversationRoutes);
    await fastify.register(opportunityRoutes);
    await fastify.register(articleRoutes);
    await fastify.register(agentRoutes);
    await fastify.register(suppressionRoutes);
    await fastify.register(conversationActionRoutes);
    await fastify.register(prospectRoutes);
    await fastify.register(webhookSubscriptionRoutes, {
      allowedRanges: parseAllowedRanges(fastify.config.WEBHOOK_ALLOWED_RANGES),
    });
  },
  { name: 'outreach-app' },
);
