import type { Clock } from '../../ports/clock.ts';
import type { EventStore } from '../../ports/eventStore.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import type { SecretBox } from '../../ports/secretBox.ts';

/** The ports the Outreach Agent's processors use. */
export interface AgentDeps {
  events: EventStore;
  readModels: ReadModelStore;
  clock: Clock;
  secrets: SecretBox;
  newId(): string;
  /** Local part of the agent's From address on the site's sending domain. */
  fromLocalPart: string;
  /** MAIL_DOMAIN: replies' bounces return to their own address there (`bounceAddress`). */
  mailDomain: string;
}
