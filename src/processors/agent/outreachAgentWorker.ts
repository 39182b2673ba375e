import { interleaveBy } from '../../lib/interleave.ts';
import { randomUUID } from 'node:crypto';
import { type ConversationEvent, conversationStream } from '../../domain/conversation.ts';
import { type EventSchemas, conversationEventSchemas } from '../../domain/eventSchemas.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import type { Drafter } from '../../ports/drafter.ts';
import type { RecordedEvent } from '../../ports/eventStore.ts';
import type { Mailer } from '../../ports/mailer.ts';
import type { Document } from '../../ports/readModelStore.ts';
import type { Triage } from '../../ports/triage.ts';
import { followLog } from '../../lib/followLog.ts';
import { sleep } from '../../lib/sleep.ts';
import type { AgentDeps } from './agentDeps.ts';
import { type RecordedDispatch, loadDispatchFacts, recordedDispatch } from './dispatchFacts.ts';
import { type PendingReplyRef, ReplySender, type SendPolicy } from './replySender.ts';
import { triageDispatch } from './triageDispatch.ts';

export const AGENT_WORKER = 'outreachAgent';
const AGENT_WORKER_VERSION = 1;
/** Replies with an attempt in flight or a retry due, kept with the worker's checkpoint. */
const PENDING = 'outreachAgentPendingReplies';
/**
 * Dispatches put aside because a reply on their conversation was in flight (or, for a pitch's other
 * ask, the first conversation's decision or reply), kept with the worker's checkpoint and taken up
 * again, in log order, when a page holds an event of a conversation they wait on, until decided.
 */
const DEFERRED = 'outreachAgentDeferredDispatches';
const PAGE = 500;
/**
 * Every deferred dispatch is taken up again at least this often, whatever the pages hold: what it
 * waits for is an event on a conversation it watches, so this only bounds the wait should one be missed.
 */
const RETRY_ALL_DEFERRED_MS = 60_000;

type PendingDoc = Document & PendingReplyRef;
/**
 * `id`: the dispatch id. Where the dispatch is: its stream and revision there (decimal), read back
 * with `readStream` (a global position cannot be read back on its own: EventStoreDB's are byte
 * offsets); `position`: its global position (decimal), for the log order.
 */
type DeferredDoc = Document & {
  conversationId: string;
  streamId: string;
  revision: string;
  position: string;
  /** The conversations whose events may end the wait (its own, and the first of its pitch); absent on docs stored before: every page. */
  watch?: string[];
};

export interface OutreachAgentOptions extends SendPolicy {
  workerId: string;
  /** Dispatches triaged at the same time. */
  concurrency: number;
  log?: { error(obj: unknown, msg?: string): void; warn?(obj: unknown, msg?: string): void };
}

export interface OutreachAgentDeps extends AgentDeps {
  triage: Triage;
  drafter: Drafter;
  mailer: Mailer;
}

/**
 * The Outreach Agent's subscriber process. It follows the global log from its own checkpoint: each
 * `AgentDispatchRequested` is triaged and its decision recorded on the conversation's stream before
 * the checkpoint passes it (a crash before that re-reads the dispatch, and the conversation's stream
 * refuses to decide the same dispatch twice); the replies' attempt, failure and success events keep
 * the list of pending replies, stored with the checkpoint, that the `ReplySender` works through.
 */
export class OutreachAgentWorker {
  private readonly sender: ReplySender;
  private readonly instanceId: string;
  private checkpoint = -1n;
  /** The stored deferred dispatches, by dispatch id. */
  private deferred = new Map<string, DeferredDoc>();
  /** When every deferred dispatch was last taken up again (epoch ms; 0: at the next page). */
  private retriedAllAt = 0;
  /** Deferred dispatches found gone from the log while it was idle: removed with the next page's batch. */
  private goneWhileIdle = new Set<string>();
  private controller: AbortController | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly deps: OutreachAgentDeps,
    private readonly options: OutreachAgentOptions,
  ) {
    this.instanceId = `${options.workerId}/${randomUUID()}`;
    this.sender = new ReplySender(deps, options, { workerId: options.workerId, instanceId: this.instanceId }, options.log);
  }

  /** This worker's name in the reply claims it writes. */
  get workerId(): string {
    return this.options.workerId;
  }

  get position(): bigint {
    return this.checkpoint;
  }

  async start(): Promise<void> {
    if (this.controller) return;
    this.controller = new AbortController();
    const stored = await this.deps.readModels.getCheckpoint(AGENT_WORKER);
    if (!stored || stored.version !== AGENT_WORKER_VERSION) {
      await this.deps.readModels.reset(AGENT_WORKER, [PENDING, DEFERRED]);
      this.checkpoint = -1n;
    } else this.checkpoint = stored.position;
    for (const doc of await this.deps.readModels.find<PendingDoc>(PENDING, {})) this.sender.track(doc);
    await this.loadDeferred();
    const { signal } = this.controller;
    this.loop = this.run(signal);
  }

  async stop(): Promise<void> {
    this.controller?.abort();
    await this.loop;
    this.loop = null;
    await this.sender.stop();
    this.controller = null;
  }

  /** Resolves when the worker has passed `position` and sent what it claimed (tests and the benchmark). */
  async waitForPosition(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.checkpoint < position) {
      if (Date.now() > deadline) return false;
      await sleep(5);
    }
    await this.sender.idle();
    return true;
  }

  private run(signal: AbortSignal): Promise<void> {
    return followLog(this.deps.events, { position: () => this.checkpoint, step: () => this.step() }, signal, (error) =>
      this.options.log?.error({ err: error }, 'outreach agent worker failed; retrying'),
    );
  }

  /** One page of the global log. Returns false when there was nothing new. */
  async step(): Promise<boolean> {
    const from = this.checkpoint;
    const page = await this.deps.events.readAll({ after: from, limit: PAGE });
    if (page.length === 0) {
      await this.retryDeferredWhileIdle();
      return false;
    }
    const to = page[page.length - 1]!.position;

    const dispatches: RecordedDispatch[] = [];
    const pending = new Map<string, { position: bigint; doc: PendingDoc | null }>();
    const touched = new Set<string>();
    for (const recorded of page) {
      const dispatch = recordedDispatch(recorded);
      if (dispatch) {
        dispatches.push(dispatch);
        continue;
      }
      if (!recorded.streamId.startsWith('conversation-')) continue;
      touched.add(recorded.streamId);
      const event = parseEvent(recorded, replyEventSchemas);
      if (!event) continue;
      const doc = pendingDocOf(event, recorded);
      if (doc !== undefined) pending.set(event.data.messageId, { position: recorded.position, doc });
    }

    // The deferred ones first: a conversation's dispatches are decided in log order. A new dispatch
    // behind one still waiting on its conversation waits too, without being triaged.
    const { retried, gone, waiting } = await this.readDeferred(touched);
    const behind = dispatches.filter((d) => waiting.has(d.dispatch.conversationId));
    const stillDeferred = await this.triageAll([...retried, ...dispatches.filter((d) => !waiting.has(d.dispatch.conversationId))]);
    for (const d of behind) stillDeferred.set(d.dispatch.dispatchId, [d.dispatch.conversationId]);
    const decided = retried.filter((d) => !stillDeferred.has(d.dispatch.dispatchId)).map((d) => d.dispatch.dispatchId);
    const newlyDeferred = dispatches.filter((d) => stillDeferred.has(d.dispatch.dispatchId));
    // A retried one still waiting may watch other conversations now (its first decided, say).
    const rewatched = retried.filter((d) => stillDeferred.has(d.dispatch.dispatchId));
    const docOf = (d: RecordedDispatch) => deferredDoc(d, stillDeferred.get(d.dispatch.dispatchId)!);

    const moved = await this.deps.readModels.applyBatch(AGENT_WORKER, AGENT_WORKER_VERSION, from, to, async (writerAt) => {
      for (const [id, { position, doc }] of pending) {
        if (doc) await writerAt(position).put(PENDING, doc);
        else await writerAt(position).remove(PENDING, id);
      }
      for (const id of [...decided, ...gone, ...this.goneWhileIdle]) await writerAt(to).remove(DEFERRED, id);
      for (const d of newlyDeferred) await writerAt(d.recorded.position).put(DEFERRED, docOf(d));
      for (const d of rewatched) await writerAt(to).put(DEFERRED, docOf(d));
    });
    if (!moved) {
      // Another copy of the worker moved first: continue from where it is.
      this.checkpoint = (await this.deps.readModels.getCheckpoint(AGENT_WORKER))?.position ?? -1n;
      await this.loadDeferred();
      return true;
    }
    this.checkpoint = to;
    this.goneWhileIdle.clear();
    for (const id of [...decided, ...gone]) this.deferred.delete(id);
    for (const d of [...newlyDeferred, ...rewatched]) this.deferred.set(d.dispatch.dispatchId, docOf(d));
    for (const [id, { doc }] of pending) {
      if (doc) this.sender.track(doc);
      else this.sender.forget(id);
    }
    return true;
  }

  /**
   * On an idle log the deferred dispatches are still taken up again after a restart and every
   * RETRY_ALL_DEFERRED_MS: one whose wait ended without an event it watches would otherwise wait for
   * the next unrelated event. Nothing is stored here (an empty page moves no checkpoint to store it
   * with): deciding a dispatch appends to its conversation, and the page holding that event takes
   * it up again, finds it decided and removes it; one gone from the log is removed with the next page.
   */
  private async retryDeferredWhileIdle(): Promise<void> {
    if (this.deferred.size === 0 || Date.now() - this.retriedAllAt < RETRY_ALL_DEFERRED_MS) return;
    const { retried, gone } = await this.readDeferred(new Set());
    // Dropped now (said once) and removed from the store with the next page's batch.
    for (const id of gone) {
      this.deferred.delete(id);
      this.goneWhileIdle.add(id);
    }
    await this.triageAll(retried);
  }

  private async loadDeferred(): Promise<void> {
    this.deferred = new Map((await this.deps.readModels.find<DeferredDoc>(DEFERRED, {})).map((d) => [d.id, d]));
    this.goneWhileIdle.clear();
    this.retriedAllAt = 0;
  }

  /**
   * The deferred dispatches due again, read back from their streams, in log order: those watching a
   * conversation `touched` (the page holds an event of its stream), and every one after a restart
   * and at least every RETRY_ALL_DEFERRED_MS. A still-waiting one costs its facts and a read of its
   * conversation, no model call. `gone`: ids whose event is no longer in the log (a stream deleted
   * since), dropped. `waiting`: conversations with a deferred dispatch not due.
   */
  private async readDeferred(touched: ReadonlySet<string>): Promise<{ retried: RecordedDispatch[]; gone: string[]; waiting: Set<string> }> {
    const retried: RecordedDispatch[] = [];
    const gone: string[] = [];
    const now = Date.now();
    const all = now - this.retriedAllAt >= RETRY_ALL_DEFERRED_MS;
    if (all) this.retriedAllAt = now;
    const isDue = (doc: DeferredDoc) => all || !doc.watch || doc.watch.some((id) => touched.has(conversationStream(id)));
    // A conversation's deferred dispatches are taken up together, or none of them.
    const dueConversations = new Set([...this.deferred.values()].filter(isDue).map((d) => d.conversationId));
    const waiting = new Set([...this.deferred.values()].map((d) => d.conversationId).filter((id) => !dueConversations.has(id)));
    const due = [...this.deferred.values()]
      .filter((d) => dueConversations.has(d.conversationId))
      .sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
    for (const doc of due) {
      const [recorded] = await this.deps.events.readStream(doc.streamId, { fromRevision: BigInt(doc.revision) });
      const dispatch = recorded?.revision === BigInt(doc.revision) ? recordedDispatch(recorded) : null;
      if (dispatch?.dispatch.dispatchId === doc.id) retried.push(dispatch);
      else {
        this.options.log?.warn?.({ dispatchId: doc.id, streamId: doc.streamId }, 'deferred dispatch no longer in the log; dropped');
        gone.push(doc.id);
      }
    }
    return { retried, gone, waiting };
  }

  /**
   * Triage dispatches, `concurrency` at a time; one conversation's dispatches in log order, and none
   * after an earlier one of its conversation that is deferred. Returns the deferred ones' ids, each
   * with the conversations it waits on.
   */
  private async triageAll(dispatches: RecordedDispatch[]): Promise<Map<string, string[]>> {
    const deferred = new Map<string, string[]>();
    const byConversation = new Map<string, RecordedDispatch[]>();
    for (const d of dispatches) {
      const id = d.dispatch.conversationId;
      const list = byConversation.get(id);
      if (list) list.push(d);
      else byConversation.set(id, [d]);
    }
    // Teams take turns: one team's burst of pitches (SMTP has no write tier) must not hold every other
    // team's dispatches in this page behind all of its own. A conversation's dispatches keep their order.
    const queues = interleaveBy([...byConversation.values()], (queue) => queue[0]!.dispatch.teamId);
    let next = 0;
    const lane = async () => {
      while (next < queues.length) {
        const queue = queues[next++]!;
        let waitsOn: string[] | null = null;
        for (const dispatch of queue) {
          waitsOn = waitsOn ?? (await this.triageOne(dispatch));
          if (waitsOn) deferred.set(dispatch.dispatch.dispatchId, waitsOn);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, queues.length) }, lane));
    return deferred;
  }

  /** The conversations a deferred dispatch waits on (its own, and the first of its pitch's); null when it was decided. */
  private async triageOne(dispatch: RecordedDispatch): Promise<string[] | null> {
    const facts = await loadDispatchFacts(this.deps, dispatch);
    if (!facts) {
      this.options.log?.warn?.({ position: dispatch.recorded.position.toString() }, 'dispatch without its message; skipped');
      return null;
    }
    // Through a mailer with send slots the sender claims the first attempt once a slot is free.
    const outcome = await triageDispatch(this.deps, facts, this.sender.metadata, !this.deps.mailer.reserve);
    const { siteId, teamId } = facts.dispatch;
    if (outcome.claimed) {
      this.sender.sendClaimed({ conversationId: outcome.claimed.conversationId, siteId, teamId }, outcome.claimed.messageId, outcome.claimed.attempt);
    }
    if (outcome.drafted) this.sender.sendDrafted({ conversationId: outcome.drafted.conversationId, siteId, teamId }, outcome.drafted.messageId);
    return outcome.deferred ? [facts.dispatch.conversationId, ...(facts.answeredBy ? [facts.answeredBy] : [])] : null;
  }
}

const deferredDoc = (d: RecordedDispatch, watch: string[]): DeferredDoc => ({
  id: d.dispatch.dispatchId,
  conversationId: d.dispatch.conversationId,
  streamId: d.recorded.streamId,
  revision: d.recorded.revision.toString(),
  position: d.recorded.position.toString(),
  watch,
});

/** The events that keep the pending-reply list: a reply's draft, attempts and outcomes. */
type ReplyEvent = Extract<ConversationEvent, { type: 'ReplyDrafted' | 'ReplySendAttempted' | 'ReplySendFailed' | 'ReplySent' }>;
const replyEventSchemas: EventSchemas<ReplyEvent> = {
  ReplyDrafted: conversationEventSchemas.ReplyDrafted,
  ReplySendAttempted: conversationEventSchemas.ReplySendAttempted,
  ReplySendFailed: conversationEventSchemas.ReplySendFailed,
  ReplySent: conversationEventSchemas.ReplySent,
};

/** The pending-reply document after one reply event: a doc to store, null to remove, undefined for no change. */
function pendingDocOf(event: ReplyEvent, recorded: RecordedEvent): PendingDoc | null | undefined {
  const d = event.data;
  const doc = (state: Pick<PendingDoc, 'attempt' | 'inFlight' | 'retryAt' | 'startedBy' | 'startedAt'>): PendingDoc => ({
    id: d.messageId,
    conversationId: d.conversationId,
    siteId: d.siteId,
    teamId: d.teamId,
    messageId: d.messageId,
    ...state,
  });
  switch (event.type) {
    case 'ReplyDrafted':
      // Its first attempt is claimed in the same append (then the attempt's doc follows), or by the
      // sender once a send slot is free: due now, as attempt 0's retry.
      return doc({ attempt: 0, inFlight: false, retryAt: event.data.occurredAt, startedBy: null, startedAt: event.data.occurredAt });
    case 'ReplySendAttempted': {
      const worker = recorded.metadata['workerInstance'];
      return doc({ attempt: event.data.attempt, inFlight: true, retryAt: null, startedBy: typeof worker === 'string' ? worker : null, startedAt: event.data.occurredAt });
    }
    case 'ReplySendFailed':
      if (event.data.retryAt === null) return null;
      return doc({ attempt: event.data.attempt, inFlight: false, retryAt: event.data.retryAt, startedBy: null, startedAt: event.data.occurredAt });
    case 'ReplySent':
      return null;
    default:
      return undefined;
  }
}
