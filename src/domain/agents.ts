import { type Decider, assertNever } from './decider.ts';

/** The spec's agent keys (the `{agentKey}` path values). */
export const AGENT_KEYS = ['article_creation', 'ai_prompt', 'article_boost', 'interlinking', 'site_performance', 'outreach'] as const;
export type AgentKey = (typeof AGENT_KEYS)[number];

export const REPLY_TONES = ['friendly', 'formal', 'brief'] as const;
export type ReplyTone = (typeof REPLY_TONES)[number];

export interface AgentSettings {
  active: boolean;
  /** Whether the agent may send replies on its own (meaningful for `outreach`). */
  autoReply: boolean;
  /** Outreach replies: the name shown in From, the closing signature, the wording. */
  senderName: string | null;
  signature: string | null;
  tone: ReplyTone;
  /** Outreach: answer a declined pitch with a polite no (true) or resolve it silently (false). */
  declineReplies: boolean;
}

/**
 * A new site's agents are inactive until someone turns them on: an agent that emails prospects on
 * a team's behalf is opt-in. Auto-reply is on by default, so activating the agent is the one switch.
 */
export const DEFAULT_AGENT_SETTINGS: AgentSettings = {
  active: false,
  autoReply: true,
  senderName: null,
  signature: null,
  tone: 'friendly',
  declineReplies: true,
};

/** Plans whose sites may run the Outreach Agent ("Advanced plan only"). */
export const OUTREACH_AGENT_PLANS: readonly string[] = ['advanced'];

export const agentsStream = (siteId: string) => `agents-${siteId}`;

export type AgentEvent = {
  type: 'AgentConfigured';
  data: { siteId: string; agentKey: AgentKey; changes: Partial<AgentSettings>; configuredAt: string };
};

export type AgentCommand = {
  type: 'ConfigureAgent';
  data: { siteId: string; agentKey: AgentKey; changes: Partial<AgentSettings>; now: string };
};

export type AgentsState = Partial<Record<AgentKey, AgentSettings>>;

export const settingsOf = (state: AgentsState, key: AgentKey): AgentSettings => state[key] ?? DEFAULT_AGENT_SETTINGS;

/** One stream per site holds the configuration of all six agents. */
export const agentsDecider: Decider<AgentsState, AgentCommand, AgentEvent> = {
  initialState: () => ({}),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentConfigured':
        return { ...state, [event.data.agentKey]: { ...settingsOf(state, event.data.agentKey), ...event.data.changes } };
      default:
        return assertNever(event.type);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'ConfigureAgent': {
        const current = settingsOf(state, command.data.agentKey);
        const changes: Partial<AgentSettings> = {};
        for (const [key, value] of Object.entries(command.data.changes) as [keyof AgentSettings, never][]) {
          if (value !== undefined && current[key] !== value) changes[key] = value;
        }
        if (Object.keys(changes).length === 0) return [];
        const { siteId, agentKey, now } = command.data;
        return [{ type: 'AgentConfigured', data: { siteId, agentKey, changes, configuredAt: now } }];
      }
      default:
        return assertNever(command.type);
    }
  },
};
