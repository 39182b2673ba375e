import { z } from 'zod';

/** An email address as the service stores and compares it: users, the unique-email claim, the suppression list. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/**
 * An address the service accepts from a prospect or for a suppression: the WHATWG (HTML `type=email`)
 * form, so punycode domains (`xn--p1ai`), digits in the top-level label and RFC 5322 local-part
 * characters such as `&` pass (zod's default pattern refused these), with the local part a dot-atom
 * (no leading, trailing or doubled dot, which mail servers refuse) and at least one dot in the
 * domain, since mail goes out to it over the public internet.
 */
export const EMAIL_ADDRESS_SHAPE = /^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

/** The service's rule for an address it stores: its shape, at most 320 characters (a schema for request bodies). */
export const emailAddress = z.email({ pattern: EMAIL_ADDRESS_SHAPE }).max(320);
/**
 * An address to filter by (a contact's, in any case; surrounding spaces trimmed), as REST and MCP take
 * it: another string can match nothing, and an empty one filtered for a contact without an address.
 */
export const emailFilter = z.string().trim().pipe(emailAddress).meta({ format: 'email', maxLength: 320 });
/** `emailAddress` as a test, for input that is no request body (the CLI's, a mail's). */
export const isEmailAddress = (value: string) => emailAddress.safeParse(value).success;
