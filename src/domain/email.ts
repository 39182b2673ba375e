/** An email address as the service stores and compares it: users, the unique-email claim, the suppression list. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();
