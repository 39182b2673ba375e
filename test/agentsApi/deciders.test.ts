import t from 'tap';
import {
  type AgentRunEvent,
  type QueuedRun,
  MAX_RUN_RELEASES,
  RunHeldElsewhereError,
  RunLeaseLostError,
  RunLedgerClosedError,
  RunRateLimitedError,
  agentRunDecider,
  agentRunLedgerDecider,
} from '../../src/domain/agentRun.ts';
import { DEFAULT_AGENT_SETTINGS, agentsDecider } from '../../src/domain/agents.ts';
import { CreditsRuleError, creditsDecider } from '../../src/domain/credits.ts';
import { foldCost } from '../helpers/foldCost.ts';
import { given } from '../helpers/givenWhenThen.ts';

const ref = { runId: 'r1', siteId: 's1', teamId: 't1', agentKey: 'interlinking' as const };
const queued = (runId: string, at: string, trigger: QueuedRun['trigger'] = 'on_demand'): QueuedRun => ({ ...ref, runId, trigger, requestedBy: null, queuedAt: at });

t.test('run ledger: five on-demand runs per sliding hour, earlier hour included; scheduled runs free; an id once', async (t) => {
  const history = ['12:10', '12:20', '12:30', '12:40'].map((m, i) => ({ type: 'AgentRunQueued' as const, data: queued(`r${i}`, `2026-01-01T${m}:00.000Z`) }));
  const earlier = [queued('e0', '2026-01-01T11:30:00.000Z'), queued('e1', '2026-01-01T10:59:00.000Z')];
  const at = (time: string, runId = 'new', trigger: QueuedRun['trigger'] = 'on_demand') => ({
    type: 'QueueAgentRun' as const,
    data: { run: queued(runId, `2026-01-01T${time}.000Z`, trigger), earlier, limitPerHour: 5 },
  });
  given(agentRunLedgerDecider, history).when(at('12:29:00')).thenThrows(RunRateLimitedError, /at most 5/);
  let thrown: RunRateLimitedError | null = null;
  try {
    agentRunLedgerDecider.decide(at('12:29:00'), { runs: history.map((e) => e.data), closed: false });
  } catch (error) {
    thrown = error as RunRateLimitedError;
  }
  t.equal(thrown?.retryAfterMs, 60_000, '11:30 leaves the hour at 12:30');
  given(agentRunLedgerDecider, history).when(at('12:30:00')).then([{ type: 'AgentRunQueued', data: queued('new', '2026-01-01T12:30:00.000Z') }]);
  given(agentRunLedgerDecider, history).when(at('12:29:00', 'sched', 'scheduled')).then([{ type: 'AgentRunQueued', data: queued('sched', '2026-01-01T12:29:00.000Z', 'scheduled') }]);
  given(agentRunLedgerDecider, history).when(at('12:50:00', 'r2', 'scheduled')).then([]);
});

t.test('run stream: started under a lease, renewed by its holder only, ended once; a dead worker is replaced once', async (t) => {
  const started: AgentRunEvent = { type: 'AgentRunStarted', data: { ...ref, attempt: 1, workerId: 'w1', leaseExpiresAt: '2026-01-01T12:01:00.000Z', startedAt: '2026-01-01T12:00:00.000Z' } };
  given(agentRunDecider, []).when({ type: 'StartAgentRun', data: { run: ref, workerId: 'w1', leaseMs: 60_000, now: '2026-01-01T12:00:00.000Z' } }).then([started]);
  // The runner passes the queued run; its queued fields are AgentRunQueued's, not repeated here (an auditor found them undocumented).
  const queuedRun = { ...queued('r1', '2026-01-01T11:59:00.000Z'), requestedBy: 'key-1' };
  given(agentRunDecider, []).when({ type: 'StartAgentRun', data: { run: queuedRun, workerId: 'w1', leaseMs: 60_000, now: '2026-01-01T12:00:00.000Z' } }).then([started]);
  given(agentRunDecider, [started]).when({ type: 'StartAgentRun', data: { run: ref, workerId: 'w2', leaseMs: 60_000, now: '2026-01-01T12:00:30.000Z' } }).thenThrows(RunHeldElsewhereError);
  const retried: AgentRunEvent = { type: 'AgentRunStarted', data: { ...ref, attempt: 2, workerId: 'w2', leaseExpiresAt: '2026-01-01T12:02:00.000Z', startedAt: '2026-01-01T12:01:00.000Z' } };
  given(agentRunDecider, [started]).when({ type: 'StartAgentRun', data: { run: ref, workerId: 'w2', leaseMs: 60_000, now: '2026-01-01T12:01:00.000Z' } }).then([retried]);
  given(agentRunDecider, [started, retried])
    .when({ type: 'StartAgentRun', data: { run: ref, workerId: 'w3', leaseMs: 60_000, now: '2026-01-01T12:05:00.000Z' } })
    .then([{ type: 'AgentRunFailed', data: { ...ref, attempt: 2, reason: 'worker_lost', detail: 'the worker w2 stopped renewing its lease on attempt 2 of 2', failedAt: '2026-01-01T12:05:00.000Z' } }]);
  const complete = { type: 'CompleteAgentRun' as const, data: { attempt: 1, workerId: 'w1', proposals: [], counts: { a: 1 }, creditsUsed: 0, now: '2026-01-01T12:03:00.000Z' } };
  given(agentRunDecider, [started, retried]).when(complete).thenThrows(RunLeaseLostError, /w1/);
  const succeeded = given(agentRunDecider, [started]).when(complete).then([
    { type: 'AgentRunSucceeded', data: { ...ref, attempt: 1, counts: { a: 1 }, opportunityIds: [], creditsUsed: 0, succeededAt: '2026-01-01T12:03:00.000Z' } },
  ]);
  t.equal(succeeded.status, 'succeeded');
  given(agentRunDecider, [started, { type: 'AgentRunSucceeded', data: { ...ref, attempt: 1, counts: {}, opportunityIds: [], creditsUsed: 0, succeededAt: 'x' } }])
    .when({ type: 'StartAgentRun', data: { run: ref, workerId: 'w9', leaseMs: 1, now: '2026-01-02T00:00:00.000Z' } })
    .then([]);
  given(agentRunDecider, [started]).when({ type: 'RenewAgentRunLease', data: { runId: 'r1', attempt: 1, workerId: 'w2', leaseMs: 1000, now: 'x' } }).thenThrows(RunLeaseLostError);
});

t.test('run stream: an attempt its worker released on stopping is queued again and not counted as lost', async (t) => {
  const started: AgentRunEvent = { type: 'AgentRunStarted', data: { ...ref, attempt: 1, workerId: 'w1', leaseExpiresAt: '2026-01-01T12:01:00.000Z', startedAt: '2026-01-01T12:00:00.000Z' } };
  const release = (attempt: number, workerId: string) => ({ type: 'ReleaseAgentRun' as const, data: { runId: 'r1', attempt, workerId, now: '2026-01-01T12:00:10.000Z' } });
  given(agentRunDecider, [started]).when(release(1, 'w2')).thenThrows(RunLeaseLostError, /w2/);
  const released: AgentRunEvent = { type: 'AgentRunReleased', data: { runId: 'r1', attempt: 1, workerId: 'w1', releasedAt: '2026-01-01T12:00:10.000Z' } };
  const state = given(agentRunDecider, [started]).when(release(1, 'w1')).then([released]);
  t.equal(state.status, 'released');
  given(agentRunDecider, [started, released]).when(release(1, 'w1')).thenThrows(RunLeaseLostError);
  // Taken again at once (no lease to wait for), as attempt 2; the lease of attempt 1 was still running.
  const start = (workerId: string, now: string) => ({ type: 'StartAgentRun' as const, data: { run: ref, workerId, leaseMs: 60_000, now } });
  const second: AgentRunEvent = { type: 'AgentRunStarted', data: { ...ref, attempt: 2, workerId: 'w2', leaseExpiresAt: '2026-01-01T12:01:20.000Z', startedAt: '2026-01-01T12:00:20.000Z' } };
  given(agentRunDecider, [started, released]).when(start('w2', '2026-01-01T12:00:20.000Z')).then([second]);
  // Two attempts lost after the released one: the second loss ends the run.
  const third: AgentRunEvent = { type: 'AgentRunStarted', data: { ...ref, attempt: 3, workerId: 'w3', leaseExpiresAt: '2026-01-01T12:03:00.000Z', startedAt: '2026-01-01T12:02:00.000Z' } };
  given(agentRunDecider, [started, released, second]).when(start('w3', '2026-01-01T12:02:00.000Z')).then([third]);
  given(agentRunDecider, [started, released, second, third])
    .when(start('w4', '2026-01-01T12:05:00.000Z'))
    .then([{ type: 'AgentRunFailed', data: { ...ref, attempt: 3, reason: 'worker_lost', detail: 'the worker w3 stopped renewing its lease on attempt 3 of 3', failedAt: '2026-01-01T12:05:00.000Z' } }]);
  // Released on a deploy again: not lost.
  const releasedSecond: AgentRunEvent = { type: 'AgentRunReleased', data: { runId: 'r1', attempt: 2, workerId: 'w2', releasedAt: '2026-01-01T12:01:00.000Z' } };
  given(agentRunDecider, [started, released, second, releasedSecond])
    .when(start('w3', '2026-01-01T12:01:05.000Z'))
    .then([{ type: 'AgentRunStarted', data: { ...ref, attempt: 3, workerId: 'w3', leaseExpiresAt: '2026-01-01T12:02:05.000Z', startedAt: '2026-01-01T12:01:05.000Z' } }]);
  // A release after the lease ran out (the work hung past it) gives nothing back: the attempt is lost.
  given(agentRunDecider, [started]).when({ type: 'ReleaseAgentRun', data: { runId: 'r1', attempt: 1, workerId: 'w1', now: '2026-01-01T12:01:00.000Z' } }).then([]);
  // Given back MAX_RUN_RELEASES times: the next start ends the run.
  const history: AgentRunEvent[] = [];
  for (let attempt = 1; attempt <= MAX_RUN_RELEASES; attempt++) {
    history.push({ type: 'AgentRunStarted', data: { ...ref, attempt, workerId: `w${attempt}`, leaseExpiresAt: '2026-01-01T13:00:00.000Z', startedAt: '2026-01-01T12:00:00.000Z' } });
    history.push({ type: 'AgentRunReleased', data: { runId: 'r1', attempt, workerId: `w${attempt}`, releasedAt: '2026-01-01T12:00:01.000Z' } });
  }
  given(agentRunDecider, history)
    .when(start('w9', '2026-01-01T12:00:02.000Z'))
    .then([{ type: 'AgentRunFailed', data: { ...ref, attempt: MAX_RUN_RELEASES, reason: 'worker_lost', detail: `the run's workers were stopped ${MAX_RUN_RELEASES} times before it ended`, failedAt: '2026-01-01T12:00:02.000Z' } }]);
});

t.test('credits: grants positive, debits once per run, balance may go below zero', async (t) => {
  given(creditsDecider, []).when({ type: 'GrantCredits', data: { teamId: 't1', amount: 0, note: null, now: 'x' } }).thenThrows(CreditsRuleError);
  const granted = { type: 'CreditsGranted' as const, data: { teamId: 't1', amount: 3, note: null, grantedAt: 'x' } };
  const debited = { type: 'CreditsDebited' as const, data: { teamId: 't1', siteId: 's1', runId: 'r1', amount: 5, debitedAt: 'y' } };
  const state = given(creditsDecider, [granted]).when({ type: 'DebitCredits', data: { teamId: 't1', siteId: 's1', runId: 'r1', amount: 5, now: 'y' } }).then([debited]);
  t.equal(state.granted - state.debited, -2);
  given(creditsDecider, [granted, debited]).when({ type: 'DebitCredits', data: { teamId: 't1', siteId: 's1', runId: 'r1', amount: 5, now: 'z' } }).then([]);
});

t.test('credits: a debit costs the same to fold after 20,000 runs as after 1,000', async (t) => {
  const events = Array.from({ length: 21_000 }, (_, i) => ({ type: 'CreditsDebited' as const, data: { teamId: 't1', siteId: 's1', runId: `r${i}`, amount: 1, debitedAt: 'x' } }));
  const state = events.reduce(creditsDecider.evolve, creditsDecider.initialState());
  t.equal(state.debited, 21_000);
  given(creditsDecider, events).when({ type: 'DebitCredits', data: { teamId: 't1', siteId: 's1', runId: 'r7', amount: 1, now: 'y' } }).then([]);
  // Copying the set of debited runs per debit made the fold quadratic (5,000 debits: 494 ms).
  const early = foldCost(creditsDecider, events, 1_000, 1_000);
  const late = foldCost(creditsDecider, events, 20_000, 1_000);
  // 20 times the history before: a quadratic fold would cost about 20 times as much.
  t.ok(late < early * 8, `1,000 debits after 20,000 fold in ${late.toFixed(2)} ms, after 1,000 in ${early.toFixed(2)} ms`);
});

t.test('agent settings: work settings change key by key; an unchanged value records nothing', async (t) => {
  const configured = { type: 'AgentConfigured' as const, data: { siteId: 's1', agentKey: 'interlinking' as const, changes: { active: true, workSettings: { a: 1, b: [1] } }, configuredAt: 'x' } };
  const state = given(agentsDecider, [configured])
    .when({ type: 'ConfigureAgent', data: { siteId: 's1', agentKey: 'interlinking', changes: { active: true, cadenceHours: 6, workSettings: { a: 1, b: [1, 2] } }, now: 'y' } })
    .then([{ type: 'AgentConfigured', data: { siteId: 's1', agentKey: 'interlinking', changes: { cadenceHours: 6, workSettings: { b: [1, 2] } }, configuredAt: 'y' } }]);
  t.same(state.interlinking, { ...DEFAULT_AGENT_SETTINGS, active: true, cadenceHours: 6, workSettings: { a: 1, b: [1, 2] } });
  given(agentsDecider, [configured]).when({ type: 'ConfigureAgent', data: { siteId: 's1', agentKey: 'interlinking', changes: { workSettings: { b: [1] } }, now: 'z' } }).then([]);
});

t.test('run ledger: closed once by the next hour; nothing more is queued in it, a known slot still answers nothing', async (t) => {
  const close = { type: 'CloseAgentRunLedger' as const, data: { siteId: 's1', hour: 491_234, now: '2026-01-01T13:00:00.100Z' } };
  const closed = { type: 'AgentRunLedgerClosed' as const, data: { siteId: 's1', hour: 491_234, closedAt: '2026-01-01T13:00:00.100Z' } };
  const one = { type: 'AgentRunQueued' as const, data: queued('r0', '2026-01-01T12:10:00.000Z', 'scheduled') };
  given(agentRunLedgerDecider, [one]).when(close).then([closed]);
  given(agentRunLedgerDecider, [one, closed]).when(close).then([]);
  const queue = (runId: string) => ({ type: 'QueueAgentRun' as const, data: { run: queued(runId, '2026-01-01T12:59:59.000Z', 'scheduled'), earlier: [], limitPerHour: 5 } });
  given(agentRunLedgerDecider, [one, closed]).when(queue('late')).thenThrows(RunLedgerClosedError);
  given(agentRunLedgerDecider, [one, closed]).when(queue('r0')).then([]);
});
