/**
 * A password given as an option, else from the environment variable named, saying so on stderr: a
 * variable left exported would give every later user (or team owner) the same password.
 */
export function passwordFrom(given: string | undefined, variable: 'OUTREACH_OWNER_PASSWORD' | 'OUTREACH_USER_PASSWORD'): string | undefined {
  if (given !== undefined) return given;
  const fromEnv = process.env[variable];
  if (fromEnv !== undefined) process.stderr.write(`the password is taken from ${variable}\n`);
  return fromEnv;
}
