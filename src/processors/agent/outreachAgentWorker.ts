import { randomUUID } from 'node:crypto';
import { type ConversationEvent, conversationStream } from '../../domain/conversation.ts';
import { type EventSchemas, conversationEventSchemas } from '../../domain/eventSchemas.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import type { IngestionEvent } from '../../domain/ingestion.ts';
import type { Drafter } from '../../ports/drafter.ts';
import type { RecordedEvent } from '../../ports/eventStore.ts';
import type { Mailer } from '../../ports/mailer.ts';
import type { Document } from '../../ports/readModelStore.ts';
import type { Triage } from '../../ports/triage.ts';
import { followLog, readPageOfTypes } from '../../lib/followLog.ts';
import { LazyCheckpoint } from '../../lib/lazyCheckpoint.ts';
import { sleep } from '../../lib/sleep.ts';
import { Turns } from '../../lib/turns.ts';
import type { AgentDeps } from './agentDeps.ts';
import { type RecordedDispatch, loadDispatchFacts, recordedDispatch } from './dispatchFacts.ts';
import { type PendingReplyRef, ReplySender, type SendPolicy } from './replySender.ts';
import { triageDispatch } from './triageDispatch.ts';

export const AGENT_WORKER = 'outreachAgent';
const AGENT_WORKER_VERSION = 1;
/** Replies with an attempt in flight or a retry due, kept with the worker's checkpoint. */
const PENDING = 'outreachAgentPendingReplies';
/**
 * The dispatches the checkpoint has passed that are not decided yet, kept with the worker's
 * checkpoint: those being triaged or queued for it, and those put aside because a reply on their
 * conversation was in flight (or, for a pitch's other ask, the first conversation's decision or
 * reply), taken up again, in log order, when a page holds an event of a conversation they wait on.
 */
const DEFERRED = 'outreachAgentDeferredDispatches';
/** Events read at a time. */
const PAGE = 500;
/**
 * What a page holds for the worker: the dispatches, and the events of conversation streams (only the
 * conversation decider appends there). The rest of the log (webhook deliveries, most of it while
 * they are sent) is passed over unread.
 */
const FOLLOWED_TYPES: readonly string[] = ['AgentDispatchRequested' satisfies IngestionEvent['type'], ...Object.keys(conversationEventSchemas)];
/**
 * With this many dispatches queued for triage, the next page waits up to a second for the lanes
 * (it still comes then, with the replies' events the sender needs); with QUEUED_HARD_MAX it waits
 * for them however long they take, so the queue held in memory stays bounded.
 */
const QUEUED_SOFT_MAX = PAGE;
const QUEUED_HARD_MAX = 4 * PAGE;
/**
 * Every deferred dispatch is taken up again at least this often, whatever the pages hold: what it
 * waits for is an event on a conversation it watches, so this only bounds the wait should one be missed.
 */
const RETRY_ALL_DEFERRED_MS = 60_000;
/**
 * A conversation whose triage failed (an event-store error, say) is tried again after 50 ms, doubling
 * to a minute: a store back after an outage is met within a minute, and a conversation that fails
 * every time (a bug) costs one try and one error line a minute, not one every few seconds.
 */
export const retryFailedTriageAfterMs = (failures: number): number => Math.min(50 * 2 ** (failures - 1), 60_000);

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

/** One conversation's dispatches taken up for triage, in log order (a lane triages them from the first). */
interface ConversationWork {
  conversationId: string;
  teamId: string;
  dispatches: RecordedDispatch[];
  /** Failed triages in a row: a retry is due after a pause that grows with them. */
  failures: number;
  /** A retry after a failed triage is due (it is not ready meanwhile). */
  retryPending: boolean;
}

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
 * The Outreach Agent's subscriber process. It follows the global log from its own checkpoint. Each
 * `AgentDispatchRequested` of a page is stored (`DEFERRED`) in the batch that moves the checkpoint
 * past it, then triaged by one of `concurrency` lanes that live across pages: they take
 * conversations with the teams in turn, so one team's burst does not hold another team's pitch that
 * comes a page later behind all of it, and one conversation's dispatches in log order. A decision
 * is recorded on the conversation's stream (which refuses to decide the same dispatch twice: after
 * a crash the stored dispatches are simply triaged again) and the stored dispatch removed with the
 * next page's batch, which the decision's own event usually makes (or while the log is idle). The replies' attempt, failure and
 * success events keep the list of pending replies, stored with the checkpoint, that the
 * `ReplySender` works through.
 */
export class OutreachAgentWorker {
  private sender: ReplySender;
  /**
   * How far the log is read (`position`), and the checkpoint as stored (`stored`): behind it by pages
   * of other events only, stored with the next page of the worker's or as LazyCheckpoint says (read
   * again after a crash: nothing in them is acted on).
   */
  private readonly cp: LazyCheckpoint;
  /** The deferred dispatches waiting for an event on a conversation they watch, by dispatch id. */
  private deferred = new Map<string, DeferredDoc>();
  /** When every deferred dispatch was last taken up again (epoch ms; 0: at the next page). */
  private retriedAllAt = 0;
  /** Conversations with dispatches taken up for triage, by conversation id. */
  private readonly work = new Map<string, ConversationWork>();
  /** The dispatch ids in `work`. */
  private readonly queued = new Set<string>();
  /**
   * Dispatches read (from a page, or stored when the worker started) and not triaged yet, with their
   * positions: what `position` counts as not done. A deferred one taken up again is not among them.
   */
  private readonly untriaged = new Map<string, bigint>();
  /** Conversations in `work` ready for a lane (not running, no retry pending), by team in turn. */
  private readonly ready = new Turns<ConversationWork>();
  /** Changes to the stored dispatches since the last batch (null: remove), stored with the next page's. */
  private readonly storeChanges = new Map<string, DeferredDoc | null>();
  /**
   * While a triage runs, the last page position at which each conversation stream had an event: a
   * triage that ends deferred is taken up again at once when one of its conversations had an event
   * since it began (the page that held it went by while it was still being triaged).
   */
  private readonly touchedAt = new Map<string, bigint>();
  /** The last position of the last page whose events `touchedAt` took in (or would have, with no triage running). */
  private notedThrough = -1n;
  /** For each running triage, `notedThrough` when it began. */
  private readonly triaging = new Set<{ from: bigint }>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private wakeLanes: Array<() => void> = [];
  /** Wakes a step waiting for the lanes to work off the queued dispatches. */
  private wakeStep: (() => void) | null = null;
  private controller: AbortController | null = null;
  private turn: Promise<void> = Promise.resolve();
  private loop: Promise<void> | null = null;
  private lanes: Promise<void>[] = [];

  constructor(
    private readonly deps: OutreachAgentDeps,
    private readonly options: OutreachAgentOptions,
  ) {
    this.sender = this.newSender();
    this.cp = new LazyCheckpoint(deps.readModels, AGENT_WORKER, AGENT_WORKER_VERSION);
  }

  private newSender(): ReplySender {
    // An instance id of its own: a sender after a stop takes up the claims its predecessor left as another instance's of this worker.
    const instanceId = `${this.options.workerId}/${randomUUID()}`;
    return new ReplySender(this.deps, this.options, { workerId: this.options.workerId, instanceId }, this.options.log);
  }

  /** This worker's name in the reply claims it writes. */
  get workerId(): string {
    return this.options.workerId;
  }

  /** The position up to which every dispatch read is decided or deferred: the checkpoint, or just before the oldest not triaged yet. */
  get position(): bigint {
    let position = this.cp.position;
    for (const at of this.untriaged.values()) if (at - 1n < position) position = at - 1n;
    return position;
  }

  start(): Promise<void> {
    return this.inTurn(() => this.startNow());
  }

  stop(): Promise<void> {
    return this.inTurn(() => this.stopNow());
  }

  /**
   * Starts and stops run one after another, in the order they were called: a start during a stop
   * returned at once and left the worker stopped, and a start's late steps could overwrite those of
   * a start after a stop. A failed one does not hold the next back.
   */
  private inTurn(step: () => Promise<void>): Promise<void> {
    const next = this.turn.then(step);
    this.turn = next.catch(() => {});
    return next;
  }

  private async startNow(): Promise<void> {
    if (this.controller) return;
    const controller = (this.controller = new AbortController());
    const sender = this.sender;
    const stored = await this.deps.readModels.getCheckpoint(AGENT_WORKER);
    if (!stored || stored.version !== AGENT_WORKER_VERSION) {
      await this.deps.readModels.reset(AGENT_WORKER, [PENDING, DEFERRED]);
      this.cp.at(-1n);
    } else this.cp.at(stored.position);
    for (const doc of await this.deps.readModels.find<PendingDoc>(PENDING, {})) sender.track(doc);
    // A start after a stop of this same instance: what was queued is stored, and taken up again with the rest.
    this.work.clear();
    this.queued.clear();
    this.ready.clear();
    this.untriaged.clear();
    this.touchedAt.clear();
    await this.loadDeferred();
    // Stored ones may never have been triaged (those the checkpoint passed just before a crash).
    for (const doc of this.deferred.values()) this.untriaged.set(doc.id, BigInt(doc.position));
    const { signal } = controller;
    this.lanes = Array.from({ length: Math.max(1, this.options.concurrency) }, () => this.lane(signal));
    this.loop = this.run(signal);
  }

  private async stopNow(): Promise<void> {
    if (!this.controller) return;
    this.controller.abort();
    this.wake();
    try {
      await this.loop;
      await Promise.all(this.lanes);
      this.loop = null;
      this.lanes = [];
      // Past pages of other events only: else read again at the next start (nothing in them is acted on).
      // (Lost to another copy that moved it first: that copy's checkpoint stands.)
      await this.cp.store().catch((error: unknown) => this.options.log?.warn?.({ err: error }, 'outreach agent checkpoint not stored at stop'));
      for (const timer of this.retryTimers) clearTimeout(timer);
      this.retryTimers.clear();
      await this.sender.stop();
    } finally {
      // A stopped sender sends nothing more: a start of this same worker gets its own (also after a failed stop).
      this.sender = this.newSender();
      this.controller = null;
    }
  }

  /** Resolves when every dispatch up to `position` is decided or deferred and the sender sent what it claimed (tests and the benchmark). */
  async waitForPosition(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.position < position) {
      if (Date.now() > deadline) return false;
      await sleep(5);
    }
    await this.sender.idle();
    return true;
  }

  private run(signal: AbortSignal): Promise<void> {
    return followLog(this.deps.events, { position: () => this.cp.position, step: () => this.step(signal) }, signal, (error) =>
      this.options.log?.error({ err: error }, 'outreach agent worker failed; retrying'),
    );
  }

  /** One page of the global log. Returns false when there was nothing new. */
  async step(signal?: AbortSignal): Promise<boolean> {
    // Enough queued to triage: the next page waits for the lanes, a second at most (it brings the
    // replies' events the sender needs), or as long as it takes with far too many queued.
    const deadline = Date.now() + 1_000;
    while (!signal?.aborted && (this.queued.size >= QUEUED_HARD_MAX || (this.queued.size >= QUEUED_SOFT_MAX && Date.now() < deadline))) {
      await this.lanesProgress(signal);
    }
    if (signal?.aborted) return true;
    const from = this.cp.position;
    const { page, to } = await readPageOfTypes(this.deps.events, from, PAGE, FOLLOWED_TYPES);
    if (to <= from) {
      if ((await this.cp.idle()) === 'lost') await this.followOtherCopy();
      await this.retryDeferredWhileIdle();
      return false;
    }

    const dispatches: RecordedDispatch[] = [];
    const pending = new Map<string, { position: bigint; doc: PendingDoc | null }>();
    const touched = new Set<string>();
    for (const recorded of page) {
      const dispatch = recordedDispatch(recorded);
      if (dispatch) {
        if (!this.queued.has(dispatch.dispatch.dispatchId)) dispatches.push(dispatch);
        continue;
      }
      if (!recorded.streamId.startsWith('conversation-')) continue;
      touched.add(recorded.streamId);
      const event = parseEvent(recorded, replyEventSchemas);
      if (!event) continue;
      const doc = pendingDocOf(event, recorded);
      if (doc !== undefined) pending.set(event.data.messageId, { position: recorded.position, doc });
    }
    this.noteTouched(touched, to);

    // The deferred ones whose wait may have ended go to the lanes first: a conversation's dispatches are decided in log order.
    await this.takeUpDeferred(touched);
    const changes = new Map(this.storeChanges);
    // Nothing of the worker's in the page and nothing to store: the checkpoint moves in memory only.
    if (page.length === 0 && changes.size === 0 && !this.cp.due) {
      this.cp.movedTo(to);
      return true;
    }
    const moved = await this.deps.readModels.applyBatch(AGENT_WORKER, AGENT_WORKER_VERSION, this.cp.stored, to, async (writerAt) => {
      for (const [id, { position, doc }] of pending) {
        if (doc) await writerAt(position).put(PENDING, doc);
        else await writerAt(position).remove(PENDING, id);
      }
      for (const d of dispatches) await writerAt(d.recorded.position).put(DEFERRED, deferredDoc(d, [d.dispatch.conversationId]));
      for (const [id, doc] of changes) {
        if (doc) await writerAt(to).put(DEFERRED, doc);
        else await writerAt(to).remove(DEFERRED, id);
      }
    });
    if (!moved) {
      await this.followOtherCopy();
      return true;
    }
    this.cp.committed(to);
    for (const [id, doc] of changes) if (this.storeChanges.get(id) === doc) this.storeChanges.delete(id);
    for (const [id, { doc }] of pending) {
      if (doc) this.sender.track(doc);
      else this.sender.forget(id);
    }
    // A new dispatch behind one of its conversation's still waiting waits too, without being triaged.
    const waiting = new Set([...this.deferred.values()].map((d) => d.conversationId));
    for (const d of dispatches) {
      if (waiting.has(d.dispatch.conversationId)) this.deferred.set(d.dispatch.dispatchId, deferredDoc(d, [d.dispatch.conversationId]));
      else {
        this.untriaged.set(d.dispatch.dispatchId, d.recorded.position);
        this.enqueue(d);
      }
    }
    return true;
  }

  /** Another copy of the worker moved the checkpoint first: continue from where it is (what it stored is taken up with the rest at the next page). */
  private async followOtherCopy(): Promise<void> {
    await this.cp.reload();
    await this.loadDeferred();
  }

  /** Resolves when a lane decides or defers a dispatch, after a second at most, or at the abort. */
  private lanesProgress(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wakeStep = null;
        resolve();
      };
      const timer = setTimeout(done, 1_000);
      this.wakeStep = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * On an idle log the deferred dispatches are still taken up again after a restart and every
   * RETRY_ALL_DEFERRED_MS: one whose wait ended without an event it watches would otherwise wait for
   * the next unrelated event. What the lanes then change in the store is stored with the next page
   * (deciding a dispatch appends to its conversation, which makes one), removals also while idle.
   */
  private async retryDeferredWhileIdle(): Promise<void> {
    await this.removeDecidedWhileIdle();
    if (this.deferred.size === 0 || Date.now() - this.retriedAllAt < RETRY_ALL_DEFERRED_MS) return;
    await this.takeUpDeferred(new Set());
  }

  /**
   * Stores the removals of dispatches decided since the last batch when no page comes to store them
   * with (the page holding a decision's event may be read before its lane recorded the decision).
   * Removals only, written as of just past the checkpoint, which stays where it is: every stored
   * dispatch is at or before the checkpoint, and a removed document leaves nothing behind that a
   * later write could be compared with. (A store that passes committed batches on to followers, the
   * projection thread's `onCommit`, would have them skip one whose checkpoint does not move; the
   * agent's store has none.)
   */
  private async removeDecidedWhileIdle(): Promise<void> {
    const removals = [...this.storeChanges].filter(([, doc]) => doc === null).map(([id]) => id);
    if (removals.length === 0) return;
    const at = this.cp.stored;
    const stored = await this.deps.readModels.applyBatch(AGENT_WORKER, AGENT_WORKER_VERSION, at, at, async (writerAt) => {
      for (const id of removals) await writerAt(at + 1n).remove(DEFERRED, id);
    });
    if (stored) for (const id of removals) if (this.storeChanges.get(id) === null) this.storeChanges.delete(id);
  }

  /** The stored deferred dispatches, but those queued here and this worker's changes not stored yet; all due at the next page. */
  private async loadDeferred(): Promise<void> {
    const stored = await this.deps.readModels.find<DeferredDoc>(DEFERRED, {});
    this.deferred = new Map(stored.filter((d) => !this.queued.has(d.id) && !this.storeChanges.has(d.id)).map((d) => [d.id, d]));
    for (const [id, doc] of this.storeChanges) if (doc && !this.queued.has(id)) this.deferred.set(id, doc);
    // One another copy of the worker decided meanwhile is no longer to be waited for.
    for (const id of this.untriaged.keys()) if (!this.deferred.has(id) && !this.queued.has(id)) this.untriaged.delete(id);
    this.retriedAllAt = 0;
  }

  /** Keeps the page's conversation events for the triages running (see touchedAt); forgets those no running triage can miss. */
  private noteTouched(touched: ReadonlySet<string>, to: bigint): void {
    if (to > this.notedThrough) this.notedThrough = to;
    if (this.triaging.size === 0) {
      this.touchedAt.clear();
      return;
    }
    for (const stream of touched) this.touchedAt.set(stream, to);
    if (this.touchedAt.size <= 4 * PAGE) return;
    const oldest = [...this.triaging].reduce((min, run) => (run.from < min ? run.from : min), to);
    for (const [stream, at] of this.touchedAt) if (at <= oldest) this.touchedAt.delete(stream);
  }

  /**
   * Queues for triage, in log order, the deferred dispatches due again, read back from their
   * streams: those watching a conversation `touched` (the page holds an event of its stream), and
   * every one after a restart and at least every RETRY_ALL_DEFERRED_MS. A still-waiting one costs
   * its facts and a read of its conversation, no model call. One whose event is no longer in the log
   * (a stream deleted since) is dropped.
   */
  private async takeUpDeferred(touched: ReadonlySet<string>): Promise<void> {
    const now = Date.now();
    const all = now - this.retriedAllAt >= RETRY_ALL_DEFERRED_MS;
    const isDue = (doc: DeferredDoc) => all || !doc.watch || doc.watch.some((id) => touched.has(conversationStream(id)));
    // A conversation's deferred dispatches are taken up together, or none of them.
    const dueConversations = new Set([...this.deferred.values()].filter(isDue).map((d) => d.conversationId));
    const due = [...this.deferred.values()]
      .filter((d) => dueConversations.has(d.conversationId))
      .sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
    // All read back before any leaves `deferred`: a read that fails leaves them waiting there (the step is tried again).
    const read: Array<{ doc: DeferredDoc; dispatch: RecordedDispatch | null }> = [];
    for (const doc of due) {
      const [recorded] = await this.deps.events.readStream(doc.streamId, { fromRevision: BigInt(doc.revision) });
      const dispatch = recorded?.revision === BigInt(doc.revision) ? recordedDispatch(recorded) : null;
      read.push({ doc, dispatch: dispatch?.dispatch.dispatchId === doc.id ? dispatch : null });
    }
    // Every one read: the round of all of them is done (a failed read leaves it due at the step's next try).
    if (all) this.retriedAllAt = now;
    for (const { doc, dispatch } of read) {
      this.deferred.delete(doc.id);
      if (dispatch) this.enqueue(dispatch);
      else {
        this.options.log?.warn?.({ dispatchId: doc.id, streamId: doc.streamId }, 'deferred dispatch no longer in the log; dropped');
        this.untriaged.delete(doc.id);
        this.storeChanges.set(doc.id, null);
      }
    }
  }

  /** Queues a dispatch behind its conversation's others for the lanes. */
  private enqueue(d: RecordedDispatch): void {
    const { conversationId, teamId, dispatchId } = d.dispatch;
    if (this.queued.has(dispatchId)) return;
    this.queued.add(dispatchId);
    const work = this.work.get(conversationId);
    if (work) {
      work.dispatches.push(d);
      return;
    }
    const fresh: ConversationWork = { conversationId, teamId, dispatches: [d], failures: 0, retryPending: false };
    this.work.set(conversationId, fresh);
    this.makeReady(fresh);
  }

  private makeReady(work: ConversationWork): void {
    this.ready.add(work.teamId, work);
    this.wakeLanes.shift()?.();
  }

  private wake(): void {
    for (const wake of this.wakeLanes.splice(0)) wake();
    this.wakeStep?.();
  }

  /**
   * One of the worker's `concurrency` lanes: takes the next ready conversation (teams in turn) and
   * triages its dispatches in log order until none is left, or one is deferred (then the ones behind
   * it wait with it), or a triage fails (the conversation is tried again after a pause).
   */
  private async lane(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const work = this.ready.take();
      if (!work) {
        await new Promise<void>((resolve) => this.wakeLanes.push(resolve));
        continue;
      }
      while (work.dispatches.length > 0 && !signal.aborted) {
        const dispatch = work.dispatches[0]!;
        const run = { from: this.notedThrough };
        this.triaging.add(run);
        let waitsOn: string[] | null;
        try {
          waitsOn = await this.triageOne(dispatch);
        } catch (error) {
          this.retryLater(work);
          this.options.log?.error(
            { err: error, dispatchId: dispatch.dispatch.dispatchId, failures: work.failures, retryInMs: retryFailedTriageAfterMs(work.failures) },
            'outreach agent triage failed; retrying',
          );
          break;
        } finally {
          this.triaging.delete(run);
        }
        work.failures = 0;
        if (waitsOn && waitsOn.some((id) => (this.touchedAt.get(conversationStream(id)) ?? -1n) > run.from)) {
          // A page that went by while it ran held an event of a conversation it waits on: that may have ended the wait.
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        this.untriaged.delete(dispatch.dispatch.dispatchId);
        if (waitsOn) {
          for (const d of work.dispatches.splice(0)) {
            const doc = deferredDoc(d, waitsOn);
            this.queued.delete(d.dispatch.dispatchId);
            this.untriaged.delete(d.dispatch.dispatchId);
            this.deferred.set(doc.id, doc);
            this.storeChanges.set(doc.id, doc);
          }
          this.wakeStep?.();
          break;
        }
        work.dispatches.shift();
        this.queued.delete(dispatch.dispatch.dispatchId);
        this.storeChanges.set(dispatch.dispatch.dispatchId, null);
        this.wakeStep?.();
      }
      if (work.dispatches.length === 0) this.work.delete(work.conversationId);
      else if (!work.retryPending && !signal.aborted) this.makeReady(work);
    }
  }

  /** A conversation whose triage failed goes back to the lanes after a pause (retryFailedTriageAfterMs). */
  private retryLater(work: ConversationWork): void {
    work.failures++;
    work.retryPending = true;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      work.retryPending = false;
      this.makeReady(work);
    }, retryFailedTriageAfterMs(work.failures));
    this.retryTimers.add(timer);
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
