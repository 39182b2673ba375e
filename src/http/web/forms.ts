import { z } from 'zod';

/**
 * A form field read as one string. A missing, repeated or non-string field reads as '', so a
 * schema never throws on a hand-made request: the page says what is wrong with the value instead.
 */
export const formText = z.preprocess((value) => (typeof value === 'string' ? value : ''), z.string());

/** A field that may repeat (checkboxes): always a list of its string values. */
export const formList = z.preprocess(
  (value) => (Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : typeof value === 'string' ? [value] : []),
  z.array(z.string()),
);

/** The CSRF token every signed-in form posts. */
export const csrfForm = z.object({ csrf: formText });

const fieldsOf = (body: unknown): object => (body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {});

/** Parses a form body (urlencoded, or anything else a client sent) with `schema`; a body that is not an object reads as empty. */
export function parseForm<T extends z.ZodType>(schema: T, body: unknown): z.ZodSafeParseResult<z.output<T>> {
  return schema.safeParse(fieldsOf(body));
}

/** For a schema that cannot fail (every field `formText` or `formList`, transformed at most): the form's values. */
export function readForm<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  return schema.parse(fieldsOf(body));
}

/** The first problem a failed parse found, worded for the page. */
export const firstProblem = (error: z.ZodError) => error.issues[0]?.message ?? 'The form is not valid.';

/** What a form sent, field by field, as strings: a refused form is shown again with it (escaped), not empty. */
export function typedIn(body: unknown) {
  const fields = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const list = (name: string): string[] => (Array.isArray(fields[name]) ? fields[name] : [fields[name]]).filter((v): v is string => typeof v === 'string');
  return { text: (name: string): string => list(name)[0] ?? '', list };
}
export type Typed = ReturnType<typeof typedIn>;
