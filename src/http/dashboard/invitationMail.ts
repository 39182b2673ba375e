import type { OutgoingMail } from '../../ports/mailer.ts';

/**
 * The mail that carries an invitation's code to the invited address: only whoever reads that mailbox
 * can join, so an invitation proves the person holds the address (the owner never sees the code).
 */
export function invitationMail(input: {
  invitationId: string;
  code: string;
  email: string;
  role: string;
  teamName: string;
  expiresAt: string;
  baseUrl: string;
  mailDomain: string;
}): OutgoingMail {
  return {
    messageId: `<invitation.${input.invitationId}@${input.mailDomain}>`,
    from: { name: 'Outreach Integration Service', address: `no-reply@${input.mailDomain}` },
    to: { name: null, address: input.email },
    subject: `You are invited to join ${input.teamName}`,
    text: [
      `You are invited to join the team "${input.teamName}" as ${input.role}.`,
      '',
      `Open ${input.baseUrl}/dashboard/join and enter this invitation code with a password of your own:`,
      '',
      input.code,
      '',
      `The code can be used once, until ${input.expiresAt}. If you did not expect this mail, ignore it.`,
    ].join('\r\n'),
    inReplyTo: null,
    references: [],
  };
}
