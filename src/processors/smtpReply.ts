/** An SMTP answer other than 250, with its code (smtp-server sends `responseCode` and the message). */
export class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}
