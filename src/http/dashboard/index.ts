import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sendErrorPage } from '../web/html.ts';
import { formsAndCookies } from '../web/formsAndCookies.ts';
import { refuseOtherOrigins } from '../web/sameOrigin.ts';
import { dashboardPages } from './pages.ts';
import { joinRoutes } from './join.ts';
import { signInRoutes } from './signIn.ts';
import { signInLinkRoutes } from './signInLink.ts';

/** The dashboard (sign-in, OAuth apps, API keys, webhook subscriptions) in its own encapsulated scope. */
async function dashboardPlugin(app: FastifyInstance) {
  await formsAndCookies(app);
  app.setErrorHandler(sendErrorPage);
  refuseOtherOrigins(app);
  await app.register(signInRoutes);
  await app.register(signInLinkRoutes);
  await app.register(joinRoutes);
  await app.register(dashboardPages);
}

export const dashboard = fp(dashboardPlugin, { name: 'dashboard', dependencies: ['services', 'read-your-writes'], encapsulate: true });
