import { setMaxListeners } from 'node:events';
import { type ConversationCommand, type ConversationState, agentNoLongerActs, conversationDecider, conversationStream } from '../../domain/conversation.ts';
import { handleCommand } from '../../commands/handleCommand.ts';
import { mailRefusal } from '../../commands/mailGate.ts';
import { sleep } from '../../lib/sleep.ts';
import { LONGEST_RETRY_DELAY_MS } from '../../domain/webhookDelivery.ts';
import { type ReplySendResult, sendDraft } from '../../commands/sendDraft.ts';
import { type Aggregate, aggregateStream } from '../../commands/aggregateStream.ts';
import { type Mailer, takeSendSlot } from '../../ports/mailer.ts';
import type { AgentDeps } from './agentDeps.ts';
import { commandOnReadState } from './commandOnReadState.ts';
import { otherAskTaken } from './otherAsks.ts';

export interface SendPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseMs: number;
  factor: number;
  /** How long an attempt started by another worker may stay without outcome before it counts as abandoned. */
  orphanAfterMs: number;
}

/** A reply whose latest attempt is in flight or waiting for its retry, as the log shows it. */
export interface PendingReplyRef {
  conversationId: string;
  siteId: string;
  teamId: string;
  messageId: string;
  attempt: number;
  inFlight: boolean;
  retryAt: number | null;
  /** Worker instance that started the attempt (metadata of ReplySendAttempted). */
  startedBy: string | null;
  /** Epoch ms the attempt was started. */
  startedAt: number;
}

/** A conversation and the site and team its events carry. */
export type Conv = { conversationId: string; siteId: string; teamId: string };

export const retryDelay = (attempt: number, p: SendPolicy) => Math.min(LONGEST_RETRY_DELAY_MS, p.baseMs * p.factor ** (attempt - 1));

/**
 * After an error of the event store (or another dependency) the same step is tried again: 1 s, then
 * doubled, at most a minute apart. Without it a reply was taken up again only after a restart, and a
 * pitch's other asks waited with it.
 */
const stepRetryDelay = (failures: number) => Math.min(60_000, 1_000 * 2 ** (failures - 1));

/**
 * Sends claimed replies through the mail port and records each outcome on the conversation's stream.
 *
 * Exactly-once toward the prospect: an attempt is claimed (`ReplySendAttempted`, appended with the
 * stream's expected revision, so two workers never claim the same one) before the mail leaves, with
 * a Message-Id fixed in the draft. Through a mailer with send slots (SMTP) an attempt is claimed only
 * once a slot is free (`retry`), the first one too (the triage drafts it without claiming it). An
 * attempt found claimed without an outcome (its worker died between sending and recording) is
 * resent only through a mailer that is idempotent on the Message-Id (the embedded outbox); through
 * SMTP its outcome is unknown, so it is recorded as failed for good and the conversation goes to
 * `awaiting_human`: a person decides, the prospect never gets the same reply twice.
 */
export class ReplySender {
  private readonly running = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly tasks = new Set<Promise<void>>();
  /** Consecutive failed steps per reply, for the delay before the next try. */
  private readonly failures = new Map<string, number>();
  /** The attempt this instance claimed and has not finished, and when (a step run again sends it without claiming anew). */
  private readonly claimed = new Map<string, { attempt: number; at: number }>();
  private readonly stopping = new AbortController();
  private stopped = false;

  constructor(
    private readonly deps: AgentDeps & { mailer: Mailer },
    private readonly policy: SendPolicy,
    private readonly instance: { workerId: string; instanceId: string },
    private readonly log?: { error(obj: unknown, msg?: string): void },
  ) {
    // Every reply waiting for a send slot listens for the stop (and stops listening once it has one):
    // more than ten waiting is a busy relay, not a leak, and Node's warning said otherwise.
    setMaxListeners(0, this.stopping.signal);
  }

  get metadata() {
    return { workerId: this.instance.workerId, workerInstance: this.instance.instanceId };
  }

  /** An attempt this instance has just claimed: send it now. */
  sendClaimed(c: Conv, messageId: string, attempt: number): void {
    this.claimed.set(messageId, { attempt, at: this.deps.clock.now().getTime() });
    this.run(messageId, () => this.send(c, messageId, attempt));
  }

  /** A reply this instance has just drafted without its first attempt: claim it when a send slot is free, and send it. */
  sendDrafted(c: Conv, messageId: string): void {
    this.run(messageId, () => this.retry(c, messageId, 1));
  }

  /** What the log (or the stored pending list at start) says about a reply. */
  track(p: PendingReplyRef): void {
    if (this.stopped || this.running.has(p.messageId)) return;
    // Ours, and already handled, or to be tried again after an error (that timer stays).
    if (p.inFlight && p.startedBy === this.instance.instanceId) return;
    this.clearTimer(p.messageId);
    if (p.inFlight) {
      const mine = p.startedBy?.startsWith(`${this.instance.workerId}/`) ?? false;
      // Another live worker may still be sending: give it time. Our own previous run is dead.
      const wait = mine ? 0 : Math.max(0, p.startedAt + this.policy.orphanAfterMs - this.deps.clock.now().getTime());
      this.later(p.messageId, wait, () => this.recover(p));
      return;
    }
    if (p.retryAt !== null) {
      const wait = Math.max(0, p.retryAt - this.deps.clock.now().getTime());
      this.later(p.messageId, wait, () => this.retry(p, p.messageId, p.attempt + 1));
    }
  }

  forget(messageId: string): void {
    this.clearTimer(messageId);
    this.failures.delete(messageId);
    this.claimed.delete(messageId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.tasks]);
  }

  /** Resolves when nothing is being sent (tests and the benchmark). */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  /** Runs `fn` after `ms`; a wait beyond a timer's reach (a retry time stored before delays were capped) is taken in steps. */
  private later(messageId: string, ms: number, fn: () => Promise<void>) {
    const step = Math.min(ms, LONGEST_RETRY_DELAY_MS);
    this.timers.set(
      messageId,
      setTimeout(() => {
        if (ms > step) return this.later(messageId, ms - step, fn);
        this.timers.delete(messageId);
        this.run(messageId, fn);
      }, step),
    );
  }

  private clearTimer(messageId: string) {
    const t = this.timers.get(messageId);
    if (t) clearTimeout(t);
    this.timers.delete(messageId);
  }

  /**
   * Runs one step for a reply (at most one at a time per reply). A step that throws before its mail
   * left is run again later: each step reads the conversation first and does nothing once its attempt
   * is recorded. Once the mail left, its outcome is recorded by `recordOutcome`, which never throws
   * back here unless the sender stops, so a step is never run again after its mail was sent.
   */
  private run(messageId: string, fn: () => Promise<void>): void {
    if (this.stopped || this.running.has(messageId)) return;
    this.running.add(messageId);
    const task = fn()
      .then(
        () => {
          this.failures.delete(messageId);
          this.claimed.delete(messageId);
        },
        (error: unknown) => {
          if (this.stopped) return void this.log?.error({ err: error, messageId }, 'outreach reply step failed while stopping; the next start takes it up');
          const failures = (this.failures.get(messageId) ?? 0) + 1;
          this.failures.set(messageId, failures);
          const wait = stepRetryDelay(failures);
          this.log?.error({ err: error, messageId, retryInMs: wait }, 'outreach reply step failed; it is tried again');
          // Unless the log has scheduled the reply's next step meanwhile.
          if (!this.timers.has(messageId)) this.later(messageId, wait, fn);
        },
      )
      .finally(() => {
        this.running.delete(messageId);
        this.tasks.delete(task);
      });
    this.tasks.add(task);
  }

  /**
   * Claims the attempt (unless this instance already has) and sends it, holding one of the mailer's
   * send slots throughout when it has them: through SMTP, an attempt is claimed only once a pooled
   * connection is free for it, so a crash leaves few attempts whose outcome is unknown.
   */
  private async retry(c: Conv, messageId: string, attempt: number): Promise<void> {
    const release = await takeSendSlot(this.deps.mailer, this.stopping.signal);
    // Stopping: nothing is sent; the next start takes the reply up from the log (an attempt this
    // instance had claimed, whose step is run again, as after a crash).
    if (!release) return;
    try {
      await this.claimAndSend(c, messageId, attempt);
    } finally {
      release();
    }
  }

  private async claimAndSend(c: Conv, messageId: string, attempt: number): Promise<void> {
    if (this.claimed.get(messageId)?.attempt !== attempt) {
      const r = await handleCommand(
        this.deps,
        conversationStream(c.conversationId),
        conversationDecider,
        { type: 'StartSendAttempt', data: { ...this.ref(c), messageId, attempt } },
        this.metadata,
      );
      // No attempt: already started elsewhere, or the reply was withdrawn (a person took the conversation),
      // or by this instance, in an append that was stored but reported as an error.
      const at = r.events.some((e) => e.type === 'ReplySendAttempted') ? this.deps.clock.now().getTime() : await this.claimedHere(c, messageId, attempt);
      if (at === null) return;
      this.claimed.set(messageId, { attempt, at });
    }
    await this.send(c, messageId, attempt);
  }

  /** When this instance claimed the attempt, as the log has it; null when another did (or none). */
  private async claimedHere(c: Conv, messageId: string, attempt: number): Promise<number | null> {
    const events = await this.deps.events.readStream(conversationStream(c.conversationId));
    const claim = events.findLast((e) => e.type === 'ReplySendAttempted' && (e.data as { messageId: string }).messageId === messageId);
    const data = claim?.data as { attempt: number; occurredAt: number } | undefined;
    if (!claim || !data || data.attempt !== attempt || claim.metadata['workerInstance'] !== this.instance.instanceId) return null;
    return data.occurredAt;
  }

  /** An attempt claimed by a worker that is gone. */
  private async recover(p: PendingReplyRef): Promise<void> {
    if (this.deps.mailer.idempotent) return this.send(p, p.messageId, p.attempt, { recovering: true });
    await this.record(p, p.messageId, p.attempt, {
      ok: false,
      error: 'outcome_unknown: the worker stopped while sending; the reply may have reached the prospect, so it is not sent again',
      permanent: true,
      retryAt: null,
    });
  }

  private async send(c: Conv, messageId: string, attempt: number, options: { recovering?: boolean } = {}): Promise<void> {
    const read = await aggregateStream(this.deps.events, conversationStream(c.conversationId), conversationDecider);
    const { state } = read;
    const pending = state.pending.get(messageId);
    if (!pending || !pending.inFlight || pending.attempts !== attempt) return; // recorded meanwhile
    // Sent before its worker stopped (the idempotent mailer has it): recorded as sent, whatever changed since; it cannot be called back.
    if (options.recovering && (await this.deps.mailer.holds?.(pending.draft.rfcMessageId))) {
      return this.recordOutcome(c, messageId, attempt, await sendDraft(this.deps.mailer, pending.draft, () => null), read);
    }
    // Claimed here long ago (the event store failed since): another worker may be recovering it as
    // abandoned, so it does not go out under this claim; recorded as not sent, it is retried anew.
    const claim = this.claimed.get(messageId);
    if (!options.recovering && claim?.attempt === attempt && this.deps.clock.now().getTime() - claim.at >= this.policy.orphanAfterMs / 2) {
      const retryAt = attempt < this.policy.maxAttempts ? this.deps.clock.now().getTime() : null;
      return this.record(c, messageId, attempt, { ok: false, error: 'not sent: the event store failed for too long after the claim', permanent: retryAt === null, retryAt }, read);
    }
    // A person took the conversation over since the claim (or since its sender died): it does not go out.
    const superseded = agentNoLongerActs(state, pending);
    if (superseded) return this.record(c, messageId, attempt, { ok: false, error: 'not sent', permanent: true, retryAt: null }, read);
    const { draft } = pending;
    // One reply for a pitch's several asks: a person who took one of the others since owns its answer.
    const taken = await otherAskTaken(this.deps.events, draft.answersFor ?? []);
    if (taken) return this.record(c, messageId, attempt, { ok: false, error: `not sent; withdrawn: ${taken}`, permanent: true, retryAt: null }, read);
    // Suppressed, the domain's verification withdrawn, or the agent paused, since the draft (or the last attempt): it does not go out.
    // A person's reply goes out whatever the agent's settings; the agent's (a reply, or a retried cold pitch) only while it acts.
    const agent = pending.senderType !== 'agent' ? undefined : pending.triage === 'pitch' ? 'pitch' : 'reply';
    const refused = await mailRefusal(this.deps, { teamId: c.teamId, siteId: c.siteId, to: draft.to.address, agent });
    if (refused) return this.record(c, messageId, attempt, { ok: false, error: `not sent; withdrawn: ${refused.detail}`, permanent: true, retryAt: null }, read);
    const result = await sendDraft(this.deps.mailer, draft, () =>
      attempt < this.policy.maxAttempts ? this.deps.clock.now().getTime() + retryDelay(attempt, this.policy) : null,
    );
    await this.recordOutcome(c, messageId, attempt, result, read);
  }

  /**
   * The outcome of a mail that was handed to the mailer: only this process knows it, so it is recorded
   * again after an event-store error until it is, and the attempt is never sent again meanwhile. Cut
   * short only by a stop: the next start finds the attempt claimed without an outcome (see above).
   */
  private async recordOutcome(c: Conv, messageId: string, attempt: number, result: ReplySendResult, read: Aggregate<ConversationState>): Promise<void> {
    for (let failures = 0; ; failures++) {
      try {
        return await this.record(c, messageId, attempt, result, failures === 0 ? read : undefined);
      } catch (error) {
        if (this.stopped) {
          // The next start finds the attempt without an outcome; what this process knew is in the log.
          this.log?.error({ err: error, messageId, attempt, result }, 'stopped before the outcome of a sent outreach reply was recorded');
          throw error;
        }
        const wait = stepRetryDelay(failures + 1);
        this.log?.error({ err: error, messageId, retryInMs: wait }, 'recording an outreach reply’s outcome failed; it is recorded again');
        await sleep(wait, this.stopping.signal);
      }
    }
  }

  /** `read`: the conversation as the caller has just read it, decided on unless the stream has moved since. */
  private async record(
    c: Conv,
    messageId: string,
    attempt: number,
    result: ReplySendResult,
    read?: Aggregate<ConversationState>,
  ): Promise<void> {
    const stream = conversationStream(c.conversationId);
    const command: ConversationCommand = { type: 'RecordSendResult', data: { ...this.ref(c), messageId, attempt, result } };
    const r = read
      ? await commandOnReadState(this.deps.events, stream, conversationDecider, read, command, this.metadata)
      : await handleCommand(this.deps, stream, conversationDecider, command, this.metadata);
    const failed = r.events.find((e) => e.type === 'ReplySendFailed');
    if (failed && failed.data.retryAt !== null) {
      this.track({ ...c, messageId, attempt, inFlight: false, retryAt: failed.data.retryAt, startedBy: null, startedAt: 0 });
    }
  }

  private ref(c: Conv) {
    return { conversationId: c.conversationId, siteId: c.siteId, teamId: c.teamId, now: this.deps.clock.now().getTime() };
  }
}

