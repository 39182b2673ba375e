import { type Decider, assertNever } from './decider.ts';

/** The spec's agent keys (the `{agentKey}` path values). */
export const AGENT_KEYS = ['article_creation', 'ai_prompt', 'article_boost', 'interlinking', 'site_performance', 'outreach'] as const;
export type AgentKey = (typeof AGENT_KEYS)[number];
export const isAgentKey = (value: string): value is AgentKey => (AGENT_KEYS as readonly string[]).includes(value);

/** The spec's template name of each agent key. */
export const AGENT_TEMPLATES: { readonly [K in AgentKey]: string } = {
  article_creation: 'Search Opportunity Agent',
  ai_prompt: 'AI Opportunity Agent',
  article_boost: 'Article Boost Agent',
  interlinking: 'Interlinking Agent',
  site_performance: 'Site Performance Agent',
  outreach: 'Outreach Agent',
};

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
  /** Scheduled runs: one every this many hours while active; null for on-demand runs only. */
  cadenceHours: number | null;
  /**
   * What the agent's work reads (its own zod schema validates it at the edge); only the keys ever
   * set are stored, the schema's defaults fill the rest. A change merges key by key.
   */
  workSettings: Record<string, unknown>;
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
  cadenceHours: null,
  workSettings: {},
};

export const CADENCE_HOURS_MAX = 168;
/** The Outreach Agent's reply and pitch signature, at most (the API, the CLI and the work's settings). */
export const SIGNATURE_MAX_LENGTH = 1000;

/** Plans whose sites may run the Outreach Agent ("Advanced plan only"). */
export const OUTREACH_AGENT_PLANS: readonly string[] = ['advanced'];
/** Plans "with automations": the agent endpoints need one. */
export const AUTOMATION_PLANS: readonly string[] = ['pro', 'advanced'];

/** Whether a site on `plan` may use the agent: every agent needs automations, outreach needs Advanced. */
export const planAllowsAgent = (plan: string, key: AgentKey) =>
  AUTOMATION_PLANS.includes(plan) && (key !== 'outreach' || OUTREACH_AGENT_PLANS.includes(plan));

/** Why an agent may not act on a site now, in the order its gates are checked. */
export type AgentGateClosed = 'site_not_licensed' | 'plan_excludes_agent' | 'agent_inactive' | 'auto_reply_disabled';

/**
 * The one rule for whether an agent may act on a site now: the site licensed, its plan including the
 * agent, the agent active and, for the Outreach Agent's own replies (`act: 'reply'`), its auto-reply
 * on. Null when it may. A run when it is queued and when it starts, an ingestion's `aiPaused`, the
 * worker's check before triage and every send of the agent's mail ask it, each from the facts it reads.
 */
export function agentGate(
  site: { licensed: boolean; plan: string },
  settings: Pick<AgentSettings, 'active' | 'autoReply'>,
  key: AgentKey,
  act: 'run' | 'reply',
): AgentGateClosed | null {
  if (!site.licensed) return 'site_not_licensed';
  if (!planAllowsAgent(site.plan, key)) return 'plan_excludes_agent';
  if (!settings.active) return 'agent_inactive';
  if (act === 'reply' && !settings.autoReply) return 'auto_reply_disabled';
  return null;
}

/** One agent's settings after a change: top-level fields replaced, work settings merged key by key. */
export const applyAgentChanges = (current: AgentSettings, changes: Partial<AgentSettings>): AgentSettings => ({
  ...current,
  ...changes,
  workSettings: { ...current.workSettings, ...changes.workSettings },
});

const sameValue = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

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
        return { ...state, [event.data.agentKey]: applyAgentChanges(settingsOf(state, event.data.agentKey), event.data.changes) };
      default:
        return assertNever(event.type);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'ConfigureAgent': {
        const current = settingsOf(state, command.data.agentKey);
        const { workSettings, ...fields } = command.data.changes;
        const changes: Partial<AgentSettings> = {};
        for (const [key, value] of Object.entries(fields) as [keyof AgentSettings, never][]) {
          if (value !== undefined && !sameValue(current[key], value)) changes[key] = value;
        }
        const workChanges = Object.entries(workSettings ?? {}).filter(([k, v]) => v !== undefined && !sameValue(current.workSettings[k], v));
        if (workChanges.length > 0) changes.workSettings = Object.fromEntries(workChanges);
        if (Object.keys(changes).length === 0) return [];
        const { siteId, agentKey, now } = command.data;
        return [{ type: 'AgentConfigured', data: { siteId, agentKey, changes, configuredAt: now } }];
      }
      default:
        return assertNever(command.type);
    }
  },
};
