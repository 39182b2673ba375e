/** A new event id: a version 7 UUID (RFC 9562) of `now` (epoch ms, default the current time). */
export function newEventId(now?: number): string;
