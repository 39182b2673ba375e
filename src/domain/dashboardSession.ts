import { type Decider, assertNever } from './decider.ts';

/** Dashboard sign-in sessions; the cookie carries a random token, events carry only its SHA-256. */
export const dashboardSessionStream = (sessionId: string) => `dashboard_session-${sessionId}`;

export const DASHBOARD_SESSION_TTL_MS = 12 * 3600_000;

export type DashboardSessionEvent =
  | {
      type: 'DashboardSessionStarted';
      /** `credential`: the passwordStamp of the password signed in with (absent in sessions started before it existed). */
      data: { sessionId: string; sessionHash: string; userId: string; teamId: string; credential?: string; expiresAt: string; startedAt: string };
    }
  | { type: 'DashboardSessionEnded'; data: { sessionId: string; sessionHash: string; userId: string; endedAt: string } };

export type DashboardSessionCommand =
  | { type: 'StartDashboardSession'; data: { sessionId: string; sessionHash: string; userId: string; teamId: string; credential: string; now: string } }
  | { type: 'EndDashboardSession'; data: { sessionId: string; now: string } };

export type DashboardSessionState = { status: 'none' } | { status: 'active' | 'ended'; sessionHash: string; userId: string };

export const dashboardSessionDecider: Decider<DashboardSessionState, DashboardSessionCommand, DashboardSessionEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'DashboardSessionStarted':
        return { status: 'active', sessionHash: event.data.sessionHash, userId: event.data.userId };
      case 'DashboardSessionEnded':
        return state.status === 'none' ? state : { ...state, status: 'ended' };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'StartDashboardSession': {
        if (state.status !== 'none') throw new Error('session already exists');
        const { now, ...session } = command.data;
        return [
          {
            type: 'DashboardSessionStarted',
            data: { ...session, expiresAt: new Date(Date.parse(now) + DASHBOARD_SESSION_TTL_MS).toISOString(), startedAt: now },
          },
        ];
      }
      case 'EndDashboardSession':
        if (state.status !== 'active') return [];
        return [
          { type: 'DashboardSessionEnded', data: { sessionId: command.data.sessionId, sessionHash: state.sessionHash, userId: state.userId, endedAt: command.data.now } },
        ];
      default:
        return assertNever(command);
    }
  },
};
