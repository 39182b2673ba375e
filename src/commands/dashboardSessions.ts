import { randomBytes } from 'node:crypto';
import { dashboardSessionDecider, dashboardSessionStream } from '../domain/dashboardSession.ts';
import type { CommandContext } from './context.ts';
import { sha256Hex } from './credentials.ts';
import { handleCommand } from './handleCommand.ts';

/** Starts a session; the returned token goes into the cookie and only its SHA-256 is stored. */
export async function startDashboardSession(ctx: CommandContext, input: { userId: string; teamId: string; credential: string }) {
  const sessionId = ctx.newId();
  const token = randomBytes(32).toString('base64url');
  const { position } = await handleCommand(ctx, dashboardSessionStream(sessionId), dashboardSessionDecider, {
    type: 'StartDashboardSession',
    data: { sessionId, sessionHash: sha256Hex(token), userId: input.userId, teamId: input.teamId, credential: input.credential, now: ctx.clock.now().toISOString() },
  });
  return { sessionId, token, position };
}

export async function endDashboardSession(ctx: CommandContext, input: { sessionId: string }) {
  return handleCommand(ctx, dashboardSessionStream(input.sessionId), dashboardSessionDecider, {
    type: 'EndDashboardSession',
    data: { sessionId: input.sessionId, now: ctx.clock.now().toISOString() },
  });
}
